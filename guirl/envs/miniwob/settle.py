"""Page-side scripts that decide how long to wait after an action (settling).

The environment observes the page once nothing the action started is still
pending, and waits only while something is:

- a short ``setTimeout`` (up to :data:`MAX_TRACKED_TIMEOUT_MS`) due before
  the settle cap (jQuery UI's autocomplete opens its menu 300 ms after the
  last key);
- a ``requestAnimationFrame`` callback;
- a running jQuery animation or a running finite CSS / Web animation or CSS
  transition (fades, expanding panels);
- an ``<img>`` still loading;
- a DOM change made by a timer or animation-frame callback (or by anything
  while the settle waits) less than the quiet window ago: such a change can
  start further work the page does not announce, so the page must then stay
  unchanged for the quiet window.

The DOM changes an input event handler makes while the action runs are done
when the action returns, so they alone cause no wait: when nothing is pending
the settle returns after one round trip, without a quiet window. MiniWoB's
own bookkeeping (``data-wob_*``, ``data-tampered``, the reward display and
the sync screen) is never counted as a change.

:data:`INSTALL_JS` is run at every reset (it installs itself once per page);
:data:`SETTLE_JS` polls ``busy`` in the page every :data:`POLL_MS` and
answers ``[milliseconds waited, first reason, capped]``: the reason it first
waited for (``timer``, ``frame``, ``jquery``, ``animation``, ``image``,
``mutation``; ``None`` when nothing was pending) and whether it stopped at
the cap with something still pending.
"""

from __future__ import annotations

#: ``setTimeout`` delays longer than this are not waited for (MiniWoB's own
#: episode timer is longer).
MAX_TRACKED_TIMEOUT_MS = 5000

#: How often the settle script looks again while something is pending (ms).
POLL_MS = 5

INSTALL_JS = """
if (!window.__guirlSettle) {
  var g = window.__guirlSettle = {
    timeouts: new Map(), frames: new Set(), lastAsync: -Infinity, lastMutation: -Infinity,
    setTimeout: window.setTimeout, clearTimeout: window.clearTimeout,
    requestAnimationFrame: window.requestAnimationFrame, cancelAnimationFrame: window.cancelAnimationFrame
  };
  var relevant = function (records) {
    for (var i = 0; i < records.length; i++) {
      var r = records[i], el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (r.type === 'attributes' && /^data-(wob_|tampered$)/.test(r.attributeName || '')) continue;
      if (el && el.closest && el.closest('#reward-display, #sync-task-cover')) continue;
      return true;
    }
    return false;
  };
  var observer = new MutationObserver(function (records) {
    if (relevant(records)) g.lastMutation = performance.now();
  });
  observer.observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
  var afterAsync = function () {  // changes made by a timer / frame callback: asynchronous work
    if (relevant(observer.takeRecords())) g.lastAsync = g.lastMutation = performance.now();
  };
  window.setTimeout = function (fn, delay) {
    var d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > %(max_timeout)d) return g.setTimeout.apply(window, arguments);
    var rest = Array.prototype.slice.call(arguments, 2), id;
    id = g.setTimeout.call(window, function () {
      g.timeouts.delete(id);
      try { return fn.apply(window, rest); } finally { afterAsync(); }
    }, d);
    g.timeouts.set(id, performance.now() + d);
    return id;
  };
  window.clearTimeout = function (id) { g.timeouts.delete(id); return g.clearTimeout.call(window, id); };
  window.requestAnimationFrame = function (fn) {
    var id = g.requestAnimationFrame.call(window, function (t) {
      g.frames.delete(id);
      try { return fn(t); } finally { afterAsync(); }
    });
    g.frames.add(id);
    return id;
  };
  window.cancelAnimationFrame = function (id) { g.frames.delete(id); return g.cancelAnimationFrame.call(window, id); };
  g.busy = function (start, cap, quiet) {
    var now = performance.now(), deadline = start + cap;
    for (var due of g.timeouts.values()) { if (due <= deadline) return 'timer'; }
    if (g.frames.size) return 'frame';
    if (window.jQuery && jQuery.timers && jQuery.timers.length) return 'jquery';
    if (document.getAnimations && document.getAnimations().some(function (a) {
          if (a.playState !== 'running' && !a.pending) return false;
          var end = a.effect ? a.effect.getComputedTiming().endTime : Infinity;
          return isFinite(end);
        })) return 'animation';
    for (var i = 0; i < document.images.length; i++) {
      if (!document.images[i].complete) return 'image';
    }
    if (now - g.lastAsync < quiet || (g.lastMutation > start && now - g.lastMutation < quiet)) return 'mutation';
    return null;
  };
}
""" % {"max_timeout": MAX_TRACKED_TIMEOUT_MS}

#: Async script, arguments ``(cap_ms, quiet_ms)``: resolves with ``[ms waited, first reason, capped]``.
SETTLE_JS = (
    INSTALL_JS
    + """
var cap = arguments[0], quiet = arguments[1], done = arguments[arguments.length - 1];
var g = window.__guirlSettle, start = performance.now(), first = null;
(function poll() {
  var why = g.busy(start, cap, quiet), now = performance.now();
  first = first || why;
  if (why === null || now - start >= cap) { done([now - start, first, why !== null]); return; }
  g.setTimeout.call(window, poll, %(poll)d);
})();
"""
    % {"poll": POLL_MS}
)
