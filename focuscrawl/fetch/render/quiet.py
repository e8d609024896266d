"""When a rendered page's DOM is done: the rule a render waits by.

After the page's load event the DOM is taken once no request of the page has been
under way for :data:`QUIET` seconds (at most :data:`SETTLE` seconds: a page that polls
is taken as it is then), so that data a script fetches after loading is in it. That
window is most of a render's time on a page whose scripts are done at its load event
(113 of 158 ms a render, ``bench_render.py``), so the page is also watched from the
inside (:data:`WATCH`, run in each new document before its own scripts): what it has
asked for that will run later (timers, intervals, animation frames, idle callbacks),
its fetches and XMLHttpRequests and their bodies being read, the scripts, frames,
style sheets and images it inserts until each is loaded or failed, and the running
animations. When none of that is pending at the load event, and no request of the
page is under way, nothing the page set going can change the DOM any more: it is
taken at once (counter ``render_settled_at_once``). A page that used anything whose
end cannot be seen from the page (workers, sockets, messages, observers,
WebAssembly's compiling, a timer given as a string) is waited for by the quiet
window alone, as is any page with something pending: its DOM is what it always was.

Frames are made on demand (``--enable-begin-frame-control``), and after its load event
a page that only asks for an animation frame gets none: so once the page is quiet the
crawler runs the callbacks of its pending frames itself, as a frame would (at most
:data:`FRAMES` times a page: one animating for ever is taken as it is then).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from focuscrawl.fetch.render.pipe import BrowserError, BrowserGone, DevToolsPipe
from focuscrawl.fetch.render.tab import Tab

QUIET = 0.1  # seconds without a request of the page under way after its load event
SETTLE = 1.0  # at most this long waiting for that quiet after the load event

_DONE = "__focuscrawl_done"  # the page's window property answering "nothing pending"

# the page's DOM serialised in the page's own world (Playwright's ``page.content()`` built its
# utility world in each new document first: some 40 ms of a 130 ms render)
_DOM = """(() => {
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
    return doctype + (document.documentElement ? document.documentElement.outerHTML : "");
})()"""
SERIALISE = _DOM
# the DOM if the page has nothing pending (:data:`WATCH`), else null
SERIALISE_IF_DONE = f"""(() => {{
    const done = window[{_DONE!r}];
    return typeof done === "function" && done() ? {_DOM} : null;
}})()"""

# the DOM once the page's pending animation frames are run; null if there were any (they
# ran: the page may have asked for more, or for data, so it is looked at again)
SERIALISE_AFTER_FRAMES = f"""(() => {{
    const frame = window["__focuscrawl_frame"];
    return typeof frame === "function" && frame() > 0 ? null : {_DOM};
}})()"""
FRAMES = 3  # at most this many frames run by the crawler a page (a page animating for ever asks for more)

WATCH = """(() => {
    const w = window, held = new Set(), loads = new Set(), made = new WeakSet();
    let opaque = false;  // the page used something whose end it is not told of
    const hold = (key) => { held.add(key); }, free = (key) => { held.delete(key); };
    // timeouts until they ran or were cleared, intervals until cleared (one id space)
    const [st, si, ct, ci] = [w.setTimeout, w.setInterval, w.clearTimeout, w.clearInterval];
    w.setTimeout = function setTimeout(f, ...rest) {
        if (typeof f !== "function") { opaque = true; return st.call(w, f, ...rest); }
        const id = st.call(w, function () { free("t" + id); return f.apply(this, arguments); }, ...rest);
        hold("t" + id);
        return id;
    };
    w.setInterval = function setInterval(...args) { const id = si.apply(w, args); hold("t" + id); return id; };
    w.clearTimeout = function clearTimeout(id) { free("t" + id); return ct.call(w, id); };
    w.clearInterval = function clearInterval(id) { free("t" + id); return ci.call(w, id); };
    // callbacks asked for later (idle callbacks, animation frames): held until run or
    // cancelled; those of ``kept`` also kept, by id, until run or cancelled
    const later = (ask, cancel, prefix, kept) => {
        const [a, c] = [w[ask], w[cancel]];
        if (typeof a !== "function") return;
        w[ask] = function (f, ...rest) {
            const id = a.call(w, function () {
                if (kept) kept.delete(id);
                free(prefix + id);
                return f.apply(this, arguments);
            }, ...rest);
            if (kept) kept.set(id, f);
            hold(prefix + id);
            return id;
        };
        w[cancel] = function (id) { if (kept) kept.delete(id); free(prefix + id); return c.call(w, id); };
    };
    // animation frames are kept, so that the crawler can run a frame's callbacks itself
    // (:data:`SERIALISE_AFTER_FRAMES`): frames are made on demand, and after the load
    // event none comes for a page that only asks for one
    const frames = new Map(), caf = w.cancelAnimationFrame;
    later("requestAnimationFrame", "cancelAnimationFrame", "f", frames);
    later("requestIdleCallback", "cancelIdleCallback", "i");
    // a promise the page waits for: held until settled (the page's own callbacks on it
    // are microtasks, run before anything asks whether it is done)
    const until = (obj, name) => {
        const f = obj && obj[name];
        if (typeof f !== "function") return;
        obj[name] = function () {
            const p = f.apply(this, arguments), key = {};
            if (p && typeof p.then === "function") { hold(key); const done = () => free(key); p.then(done, done); }
            return p;
        };
    };
    until(w, "fetch");
    for (const proto of [w.Response, w.Request, w.Blob].map((c) => c && c.prototype)) {
        for (const name of ["json", "text", "arrayBuffer", "blob", "formData", "bytes"]) until(proto, name);
    }
    for (const name of ["digest", "encrypt", "decrypt", "sign", "verify", "generateKey", "importKey",
                        "exportKey", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"]) {
        until(w.SubtleCrypto && w.SubtleCrypto.prototype, name);
    }
    until(w.HTMLImageElement && w.HTMLImageElement.prototype, "decode");
    until(w.FontFaceSet && w.FontFaceSet.prototype, "load");
    const send = w.XMLHttpRequest && w.XMLHttpRequest.prototype.send;
    if (send) {
        w.XMLHttpRequest.prototype.send = function () {
            const key = {};
            hold(key);
            this.addEventListener("loadend", () => free(key), { once: true });
            try { return send.apply(this, arguments); } catch (e) { free(key); throw e; }
        };
    }
    const blind = (obj, name) => {
        const f = obj && obj[name];
        if (typeof f !== "function") return;
        obj[name] = new Proxy(f, {
            apply(t, self, args) { opaque = true; return Reflect.apply(t, self, args); },
            construct(t, args, nt) { opaque = true; return Reflect.construct(t, args, nt); },
        });
    };
    for (const name of ["Worker", "SharedWorker", "WebSocket", "EventSource", "BroadcastChannel", "MessageChannel",
                        "postMessage", "IntersectionObserver", "ResizeObserver", "PerformanceObserver",
                        "FileReader", "createImageBitmap", "RTCPeerConnection", "Notification"]) blind(w, name);
    for (const name of ["compile", "instantiate", "compileStreaming", "instantiateStreaming"]) blind(w.WebAssembly, name);
    for (const name of ["postTask", "yield"]) blind(w.scheduler, name);
    blind(w.IDBFactory && w.IDBFactory.prototype, "open");
    blind(w.CacheStorage && w.CacheStorage.prototype, "open");
    blind(w.LockManager && w.LockManager.prototype, "request");
    // elements loading something, until their load or error event (a script made by a
    // script: one the HTML parser made inside innerHTML never runs, never loads)
    const create = w.Document.prototype.createElement;
    w.Document.prototype.createElement = function () {
        const node = create.apply(this, arguments);
        if (node.localName === "script") made.add(node);
        return node;
    };
    const loading = (node) => {
        switch (node.localName) {
            case "script": return made.has(node) && !!node.src;
            case "link": return /\\b(stylesheet|preload|modulepreload)\\b/i.test(node.rel || "") && !!node.href;
            case "iframe": case "frame": return !!node.src && node.src !== "about:blank";
            case "img": return !!node.src && !node.src.startsWith("data:") && !node.complete;
            case "object": case "embed": return true;
            default: return false;
        }
    };
    const seen = (node) => {
        if (node.nodeType !== 1) return;
        if (loading(node)) loads.add(node);
        if (node.firstElementChild) for (const inner of node.querySelectorAll("*")) if (loading(inner)) loads.add(inner);
    };
    new MutationObserver((records) => {
        for (const record of records) for (const node of record.addedNodes) seen(node);
    }).observe(document, { childList: true, subtree: true });
    const ended = (event) => { loads.delete(event.target); };
    w.addEventListener("load", ended, true);
    w.addEventListener("error", ended, true);
    const running = () => typeof document.getAnimations === "function"
        && document.getAnimations().some((a) => a.pending || a.playState === "running");
    Object.defineProperty(w, "__focuscrawl_done", {
        value: () => document.readyState === "complete" && !opaque && held.size === 0 && loads.size === 0 && !running(),
    });
    // one frame's callbacks, as a frame runs them (each with the frame's time; one that
    // throws is reported and the others still run); how many ran
    Object.defineProperty(w, "__focuscrawl_frame", {
        value: () => {
            const due = [...frames];
            frames.clear();
            const t = performance.now();
            for (const [id, f] of due) {
                caf.call(w, id);
                free("f" + id);
                try { f.call(w, t); } catch (e) { if (typeof w.reportError === "function") w.reportError(e); }
            }
            return due.length;
        },
    });
})();"""



async def settle(pipe: DevToolsPipe, tab: Tab, counters: Counter[str]) -> dict[str, Any]:
    """The answer of ``tab``'s DOM serialised once it is done (its load event come): at
    once when the page has nothing pending, else once no request of it has been under
    way for :data:`QUIET` seconds (at most :data:`SETTLE` seconds)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + SETTLE
    tab.last = last = loop.time()
    frames = 0
    if not tab.busy:  # nothing pending in the page (:data:`WATCH`): its DOM at once
        try:
            answer = await _serialise(pipe, tab, SERIALISE_IF_DONE)
        except BrowserGone:
            raise
        except BrowserError:
            answer = {}
        if isinstance(answer.get("result", {}).get("value"), str) and not tab.busy and tab.last == last:
            counters["render_settled_at_once"] += 1
            return answer
    while (now := loop.time()) < give_up:
        if tab.busy:
            await asyncio.sleep(QUIET / 2)
            continue
        quiet = now - tab.last
        if quiet >= QUIET:
            # a request the page made before this point may not have been answered
            # (its event on its way, late on a loaded machine): taking the DOM is one
            # round trip to the page, which delivers the events sent before its answer;
            # the DOM is kept only if none was a request
            last = tab.last
            try:
                answer = await _serialise(pipe, tab, SERIALISE_AFTER_FRAMES if frames < FRAMES else SERIALISE)
            except BrowserGone:
                raise
            except BrowserError:  # a page whose document went away: nothing to wait for
                break
            if answer.get("result", {}).get("subtype") == "null":  # a frame's callbacks ran: looked at again
                frames += 1
                counters["render_frames_run"] += 1
                continue
            if tab.busy or tab.last != last:
                continue
            return answer
        await asyncio.sleep(min(QUIET - quiet, give_up - now))
    return await _serialise(pipe, tab)


async def _serialise(pipe: DevToolsPipe, tab: Tab, expression: str = SERIALISE) -> dict[str, Any]:
    return await pipe.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, tab.session)
