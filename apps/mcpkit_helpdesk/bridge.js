// The MCP Apps bridge every help-desk view inlines (JSON-RPC 2.0 over postMessage with the host, as the extension
// io.modelcontextprotocol/ui describes it): no library, no CDN, nothing fetched. The host relays tools/call to the
// server on the signed-in agent's connection, so a view reaches only what its agent may.
const bridge = (() => {
  "use strict";
  const waiting = new Map();
  const listeners = { "ui/notifications/tool-input": [], "ui/notifications/tool-result": [] };
  let next = 1;

  function send(message) { window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*"); }

  function request(method, params) {
    const id = next++;
    send({ id, method, params });
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && !message.method) {
      const pending = waiting.get(message.id);
      if (!pending) return;
      waiting.delete(message.id);
      if (message.error) pending.reject(new Error(message.error.message));
      else pending.resolve(message.result);
    } else if (listeners[message.method]) {
      for (const listener of listeners[message.method]) listener(message.params || {});
    } else if ((message.method === "ui/resource-teardown" || message.method === "ping") && message.id !== undefined) {
      send({ id: message.id, result: {} });
    }
  });

  /** What an error result says (its text content). */
  function failure(result) { return (result.content || []).map((block) => block.text || "").join(""); }

  /** Calls a server tool through the host; an Error with the tool's own message when it answers with an error. */
  async function call(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    if (result.isError) throw new Error(failure(result) || name + " failed");
    return result.structuredContent || {};
  }

  /** Says hello to the host (ui/initialize, then initialized; the host sends the tool's input and result after),
   * then runs `loaded`; an error's message goes to `status`. */
  async function start(name, status, loaded) {
    try {
      await request("ui/initialize", {
        appInfo: { name, version: "1.0.0" },
        appCapabilities: {},
        protocolVersion: "2026-01-26",
      });
      send({ method: "ui/notifications/initialized" });
      if (loaded) await loaded();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  /** Runs `work` (a click's, a submit's) with `controls` disabled meanwhile; an error's message goes to `status`. */
  async function run(controls, status, work) {
    for (const control of controls) control.disabled = true;
    try {
      await work();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      for (const control of controls) control.disabled = false;
    }
  }

  /** `listener(structuredContent, result)` for the result of the call the view is shown for. */
  function onResult(listener) {
    listeners["ui/notifications/tool-result"].push((params) => listener(params.structuredContent || {}, params));
  }

  /** A view that edits one field: once the host is there `load()` fills it, and submitting `form` runs `save()`,
   * both answering with a tool result for `show`; `saving` and `saved` are what the status line says meanwhile. */
  function editor(name, { form, field, button, status, load, save, show, saving, saved }) {
    onResult((result, params) => {
      if (params.isError) status.textContent = failure(params);
      else show(result);
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      status.textContent = saving;
      run([field, button], status, async () => {
        show(await save());
        status.textContent = saved;
      });
    });
    start(name, status, () => run([field, button], status, async () => show(await load())));
  }

  return {
    call,
    editor,
    failure,
    onResult,
    run,
    start,
    onInput(listener) { listeners["ui/notifications/tool-input"].push((params) => listener(params.arguments || {})); },
  };
})();
