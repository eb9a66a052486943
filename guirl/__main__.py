import sys

from guirl.cli import main

sys.exit(main())
