"""Web domain: a browser with tabs, an address bar, back, and a few sites.

Sites: a search engine (results are links), a shop (product list, cart,
checkout, a cookie pop-up), a contact form (text fields, drop-down, radio
buttons, checkbox), news (a newsletter pop-up), mail. Pages are stacks of
rows that scroll when the screen is short. State: ``tab``, ``urls`` /
``hists`` (per tab), ``addr``, ``q``, ``popup``, ``seen`` (sites whose pop-up
was answered), ``cart``, ``order``, ``f.*`` (form fields), ``sent``.
"""

from __future__ import annotations

from collections.abc import Callable

from guirl.envs.sim.content import COUNTRIES, Content
from guirl.envs.sim.kit import Builder, text_width
from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Screen

HOME = "search.example"
POPUPS = {"shop.example": "cookies", "news.example": "newsletter"}
HEADLINES = ("Local team wins the cup", "New park opens downtown", "Rain expected all week")


def slug(title: str) -> str:
    return "read.example/" + title.lower().replace(" ", "-")


def normalise_url(text: str) -> str:
    url = text.strip().lower()
    for prefix in ("https://", "http://", "www."):
        url = url.removeprefix(prefix)
    return url.rstrip("/")


class Web:
    name = "web"

    def initial_state(self, content: Content) -> dict:
        return {"tab": 0, "urls": (HOME, "mail.example"), "hists": ((), ()), "addr": "", "q": "", "popup": None,
                "seen": (), "cart": (), "order": (), "f.name": "", "f.email": "", "f.country": "Choose...",
                "f.ship": "Standard", "f.agree": False, "f.err": False, "sent": (), "focus": None,
                "selall": False, "dd": None}

    # -- screens --------------------------------------------------------------------------
    def build(self, state: dict, content: Content, preset: Preset) -> Screen:
        b = Builder(preset, "web")
        p = preset
        b.add("browser", "window", "Browser", (0, 0, p.width, p.height), style="browser")
        tab_h, bar_h = p.control, p.control + p.pad
        for i, url in enumerate(state["urls"]):
            w = int(min(p.width * 0.45, p.font * 14))
            b.add(f"tab{i}", "tab", self.title(url, content), (i * w, 0, (i + 1) * w - 2, tab_h), style="btab",
                  click=("switch", i), parent="browser", focused=state["tab"] == i)
        y = tab_h
        back = ("back",) if state["hists"][state["tab"]] else None
        b.button("nav.back", "Back", p.pad // 2, y + p.pad // 2, back, "browser", height=bar_h - p.pad,
                 enabled=back is not None, style="nav")
        x = b.widgets[-1].box[2] + p.pad // 2
        url = state["urls"][state["tab"]]
        shown = state["addr"] if state["focus"] == "addr" else url
        addr = b.textbox("addr", "Address", (x, y + p.pad // 2, p.width - p.pad // 2, y + bar_h - p.pad // 2),
                         shown, "addr", state, "browser", select_all=True)
        if state["focus"] != "addr":  # focusing shows the current address, selected
            addr.click = ("seq", ("set", "addr", url), ("focus", "addr", True))
        b.key((("alt", "left"), back), (("ctrl", "l"), ("seq", ("set", "addr", url), ("focus", "addr", True))),
              (("ctrl", "tab"), ("switch", 1 - state["tab"])))
        top = y + bar_h
        rows = self._page(b, state, content, url)
        first, visible = b.scroll_rows("page", len(rows), state, top + p.pad, p.height - p.pad, p.row)
        b.add("page", "document", self.title(url, content), (0, top, p.width, p.height), style="page",
              parent="browser", scroll="page")
        for i, row in enumerate(rows[first:first + visible]):
            row(top + p.pad + i * p.row)
        if state["focus"] == "addr":
            b.key((("enter",), ("go", state["addr"])))
        if state["popup"]:
            self._popup(b, state)
        return b.screen()

    def title(self, url: str, content: Content) -> str:
        site = url.split("/")[0]
        names = {HOME: "Search", "shop.example": "Shop", "forms.example": "Contact", "news.example": "News",
                 "mail.example": "Mail", "read.example": "Article"}
        return names.get(site, "Error")

    def _page(self, b: Builder, state: dict, content: Content, url: str) -> list[Callable[[int], None]]:
        p = b.p
        h = p.control
        rows: list[Callable[[int], None]] = []
        right = _right(p)

        def text(id: str, label: str, style: str = "heading") -> None:
            rows.append(lambda y: b.add(id, "text", label, (p.pad, y, right, y + h), style=style,
                                        parent="page"))

        def link(id: str, label: str, command: tuple) -> None:
            rows.append(lambda y: b.add(id, "link", label, (p.pad, y, p.pad + text_width(label, p.font) + p.pad,
                                                            y + h), style="link", click=command, parent="page"))

        if url == HOME:
            text("h.search", "Search the web")

            def search_row(y: int) -> None:
                w = b.button("btn.search", "Search", 0, y, ("search",), "page", height=h)
                bw = w.box[2] - w.box[0]
                w.box = (right - bw, y, right, y + h)
                b.textbox("q", "Search", (p.pad, y, right - p.pad - bw, y + h), state["q"], "q", state, "page")
            rows.append(search_row)
            for label, target in (("Shop", "shop.example"), ("Contact form", "forms.example"), ("News", "news.example")):
                link(f"link.{label}", label, ("go", target))
            if state["focus"] == "q":
                b.key((("enter",), ("search",)))
        elif url.startswith(HOME + "/?q="):
            query = url.split("=", 1)[1]
            results = content.results.get(query, ())
            text("h.results", f"Results for '{query}'" if results else f"No results for '{query}'")
            for title in results:
                link(f"result.{title}", title, ("go", slug(title)))
        elif url.startswith("read.example/"):
            text("h.article", url.split("/", 1)[1].replace("-", " ").title())
            text("article.body", "Lorem ipsum article text.", style="body")
            link("link.home", "Back to search", ("go", HOME))
        elif url == "shop.example":
            rows.append(lambda y: b.button("btn.cart", f"Cart ({len(state['cart'])})", p.pad, y, ("go", "shop.example/cart"),
                                           "page", height=h))
            for name, price in content.products.items():
                rows.append(lambda y, name=name, price=price: self._product(b, y, h, name, price))
        elif url == "shop.example/cart":
            text("h.cart", f"Your cart ({len(state['cart'])} items)")
            for i, name in enumerate(state["cart"]):
                rows.append(lambda y, i=i, name=name: self._cart_row(b, y, h, i, name))
            rows.append(lambda y: b.button("btn.checkout", "Checkout", p.pad, y, ("checkout",), "page", height=h,
                                           enabled=bool(state["cart"])))
        elif url == "forms.example":
            self._form(b, state, rows, h)
        elif url in ("shop.example/done", "forms.example/sent"):
            text("h.done", "Thank you! Order placed." if url.startswith("shop") else "Thank you! Message sent.")
        elif url == "news.example":
            text("h.news", "Today's news")
            for title in HEADLINES:
                link(f"news.{title}", title, ("go", slug(title)))
        elif url == "mail.example":
            text("h.mail", "Inbox (3)")
            for sender in ("Team", "Bank", "Newsletter"):
                rows.append(lambda y, s=sender: b.add(f"mail.{s}", "listitem", f"{s}: weekly update",
                                                      (p.pad, y, right, y + h), style="row", parent="page"))
        else:
            text("h.error", "This site can't be reached")
            text("error.url", url, style="body")
        return rows

    def _product(self, b: Builder, y: int, h: int, name: str, price: str) -> None:
        p = b.p
        right = _right(p)
        b.add(f"product.{name}", "text", f"{name}  {price}", (p.pad, y, right // 2, y + h), style="body",
              parent="page")
        w = b.button(f"add.{name}", "Add to cart", 0, y, ("add", name), "page", height=h)
        bw = w.box[2] - w.box[0]
        w.box = (right - bw, y, right, y + h)

    def _cart_row(self, b: Builder, y: int, h: int, i: int, name: str) -> None:
        p = b.p
        right = _right(p)
        b.add(f"cart.{i}", "text", name, (p.pad, y, right // 2, y + h), style="body", parent="page")
        w = b.button(f"remove.{i}", "Remove", 0, y, ("remove", i), "page", height=h)
        bw = w.box[2] - w.box[0]
        w.box = (right - bw, y, right, y + h)

    def _form(self, b: Builder, state: dict, rows: list, h: int) -> None:
        p = b.p
        right = _right(p)
        label_w = text_width("Country", p.font) + p.pad
        for field, label in (("f.name", "Name"), ("f.email", "Email")):
            def field_row(y: int, field=field, label=label) -> None:
                b.add(f"label.{label}", "text", label, (p.pad, y, p.pad + label_w, y + h), parent="page")
                b.textbox(f"field.{label}", label, (2 * p.pad + label_w, y, right, y + h), state[field],
                          field, state, "page")
            rows.append(field_row)

        def country_row(y: int) -> None:
            b.add("label.Country", "text", "Country", (p.pad, y, p.pad + label_w, y + h), parent="page")
            b.combobox("field.Country", "Country", (2 * p.pad + label_w, y, right, y + h),
                       state["f.country"], list(COUNTRIES[:4]), "f.country", state, "page")
        rows.append(country_row)

        def ship_row(y: int) -> None:
            x = p.pad
            for option in ("Standard", "Express"):
                w = b.checkbox(f"radio.{option}", option, x, y, state["f.ship"] == option, ("set", "f.ship", option),
                               "page", role="radio", style="radio")
                x = w.box[2] + p.pad
        rows.append(ship_row)
        rows.append(lambda y: b.checkbox("check.agree", "I agree", p.pad, y, state["f.agree"], ("toggle", "f.agree"),
                                         "page"))
        rows.append(lambda y: b.button("btn.submit", "Submit", p.pad, y, ("submit",), "page", height=h))
        if state["f.err"]:
            rows.append(lambda y: b.add("form.error", "text", "Please fill in every field", (p.pad, y, right,
                                        y + h), style="error", parent="page"))
        order = {"f.name": ("focus", "f.email"), "f.email": ("focus", None)}
        if state["focus"] in order:
            b.key((("tab",), order[state["focus"]]))

    def _popup(self, b: Builder, state: dict) -> None:
        p = b.p
        b.keymap.clear()
        b.type_target = None
        close = ("answer_popup",)
        title = "We use cookies" if state["popup"] == "cookies" else "Subscribe to our newsletter?"
        box, _ = b.dialog("popup", title, int(p.width * 0.85), 2 * p.row + 3 * p.pad, close)
        h = p.control
        labels = ("Accept all", "Reject") if state["popup"] == "cookies" else ("Subscribe", "No thanks")
        x = box[0] + p.pad
        for label in labels:
            w = b.button(f"popup.{label}", label, x, box[3] - h - p.pad, close, "popup", height=h)
            x = w.box[2] + p.pad

    # -- commands ---------------------------------------------------------------------------
    def reduce(self, state: dict, content: Content, command: tuple) -> None:
        op = command[0]
        if op == "go":
            self._go(state, normalise_url(command[1]))
        elif op == "search":
            if state["q"].strip():
                self._go(state, f"{HOME}/?q={state['q'].strip().lower()}")
        elif op == "back":
            tab = state["tab"]
            hist = state["hists"][tab]
            if hist:
                state["urls"] = _replace(state["urls"], tab, hist[-1])
                state["hists"] = _replace(state["hists"], tab, hist[:-1])
                state.update(focus=None, dd=None, popup=None)
                state.pop("scroll.page", None)
        elif op == "switch":
            state.update(tab=command[1], focus=None, dd=None)
            state.pop("scroll.page", None)
        elif op == "answer_popup":
            state.update(popup=None, seen=state["seen"] + (state["urls"][state["tab"]],))
        elif op == "add":
            state["cart"] = state["cart"] + (command[1],)
        elif op == "remove":
            state["cart"] = state["cart"][: command[1]] + state["cart"][command[1] + 1:]
        elif op == "checkout":
            if state["cart"]:
                state.update(order=state["cart"], cart=())
                self._go(state, "shop.example/done")
        elif op == "submit":
            if state["f.name"] and state["f.email"] and state["f.country"] != "Choose..." and state["f.agree"]:
                state["sent"] = (state["f.name"], state["f.email"], state["f.country"], state["f.ship"])
                self._go(state, "forms.example/sent")
            else:
                state["f.err"] = True

    def _go(self, state: dict, url: str) -> None:
        tab = state["tab"]
        current = state["urls"][tab]
        if url == current:
            state.update(focus=None)
            return
        state["hists"] = _replace(state["hists"], tab, state["hists"][tab] + (current,))
        state["urls"] = _replace(state["urls"], tab, url)
        state.update(focus=None, dd=None, addr="")
        state.pop("scroll.page", None)
        if url in POPUPS and url not in state["seen"]:
            state["popup"] = POPUPS[url]


def _right(p: Preset) -> int:
    """Right edge of page content: pages keep a readable width on wide screens."""
    return min(p.width - p.pad, p.font * 48)


def _replace(values: tuple, index: int, value: object) -> tuple:
    return values[:index] + (value,) + values[index + 1:]
