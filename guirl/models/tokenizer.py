"""A small byte-level BPE tokenizer for tiny Qwen-VL policies, trained locally.

No pretrained weights or vocabularies exist offline, so the tiny models get a
tokenizer trained here on GUI-agent text: instructions, reasoning sentences
and actions written in every registered output format (plus hand-written
templates of the five methods' formats (docs/methods.md), so the corpus is rich even before the
format modules exist).

It follows the real Qwen2 / Qwen2.5-VL / Qwen3-VL tokenizers where it matters:
the same NFC normaliser and pre-tokenizer regex (taken from transformers'
``Qwen2Tokenizer``), so **every digit is its own token** (``\\p{N}`` matches
one digit: coordinates are read out digit by digit); byte-level BPE (any
string round-trips); the same special tokens and ChatML chat template with
``<|vision_start|><|image_pad|><|vision_end|>`` per image. It is wrapped as a
transformers ``Qwen2Tokenizer`` and saves with ``save_pretrained``.

Departure from the real ones: the vocabulary is tiny (default 1024) and its
ids differ, so checkpoints of real Qwen models cannot share it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
from tokenizers.models import BPE
from tokenizers.trainers import BpeTrainer
from transformers import Qwen2Tokenizer
from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

from guirl.models.corpus import iter_corpus

#: Special tokens of the Qwen-VL family, in the order they get the first ids.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
#: Tokens that are text, not control (the model writes them), kept whole as in Qwen.
ADDED_TEXT_TOKENS: tuple[str, ...] = ("<tool_call>", "</tool_call>", "<think>", "</think>")

#: ChatML template as Qwen2.5-VL / Qwen3-VL processors expect it: a default
#: system turn when none is given; each image content item becomes
#: ``<|vision_start|><|image_pad|><|vision_end|>`` (the processor expands the
#: pad to one token per merged patch); videos likewise with ``<|video_pad|>``.
CHAT_TEMPLATE = (
    "{%- set image_count = namespace(value=0) -%}"
    "{%- set video_count = namespace(value=0) -%}"
    "{%- for message in messages -%}"
    "{%- if loop.first and message['role'] != 'system' -%}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}"
    "{%- endif -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string -%}"
    "{{ message['content'] }}"
    "{%- else -%}"
    "{%- for content in message['content'] -%}"
    "{%- if content['type'] == 'image' or 'image' in content or 'image_url' in content -%}"
    "{%- set image_count.value = image_count.value + 1 -%}"
    "{%- if add_vision_id -%}{{ 'Picture ' + image_count.value|string + ': ' }}{%- endif -%}"
    "{{ '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif content['type'] == 'video' or 'video' in content -%}"
    "{%- set video_count.value = video_count.value + 1 -%}"
    "{%- if add_vision_id -%}{{ 'Video ' + video_count.value|string + ': ' }}{%- endif -%}"
    "{{ '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{%- elif 'text' in content -%}"
    "{{ content['text'] }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- endif -%}"
    "{{ '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{%- endif -%}"
)


def _raw_tokenizer() -> Tokenizer:
    """An untrained BPE with Qwen2's normaliser, pre-tokenizer and decoder."""
    tok = Tokenizer(BPE(unk_token=None, continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def train_tokenizer(
    vocab_size: int = 1024,
    seed: int = 0,
    corpus: Iterator[str] | None = None,
    num_samples: int = 6000,
) -> Qwen2Tokenizer:
    """Train the tiny tokenizer; the same ``seed`` (and code) gives the same vocabulary.

    ``corpus`` defaults to :func:`guirl.models.corpus.iter_corpus` (``num_samples``
    templated GUI-agent texts drawn with ``seed``). ``vocab_size`` counts the 256
    byte tokens and the special tokens; a small corpus may stop earlier.
    """
    if vocab_size < 256 + len(SPECIAL_TOKENS) + 1:
        raise ValueError(f"vocab_size={vocab_size} is too small: byte-level BPE needs at least 264 tokens")
    texts = list(corpus) if corpus is not None else list(iter_corpus(random.Random(seed), num_samples))
    raw = _raw_tokenizer()
    trainer = BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # BpeTrainer is deterministic for a given ordered corpus (ties break by
    # token order), so the seed above fixes the whole vocabulary.
    raw.train_from_iterator(texts, trainer=trainer)
    model = raw.model
    vocab = raw.get_vocab()
    merges = _merges_of(raw)
    del model
    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        unk_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(SPECIAL_TOKENS[1:]),
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
        model_max_length=32768,
    )
    tokenizer.add_tokens(list(ADDED_TEXT_TOKENS))
    return tokenizer


def _merges_of(tok: Tokenizer) -> list[tuple[str, str]]:
    """The trained merges in rank order (read from the tokenizer's JSON form)."""
    import json

    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in merges]
