// The one step of session v1-canvas that does not go through Agent Canvas's page: saving the LLM
// on the window's agent-server. Canvas 1.20.0's page keeps a local backend's LLM as named profiles
// (its home page lets a task be sent only when the active profile has a key), edited in a
// schema-driven form whose custom model and base URL sit behind its advanced view; the session's
// brief is the backend, the workspace, the worktree mode and the task, so this step runs Canvas's
// own compiled services (its npm tarball's `dist/`, with typescript-client 1.49.1 inside) in Node
// 24 and makes the calls Canvas's LLM setup makes: the agent settings' LLM (PATCH /api/settings,
// `agent_settings_diff.llm`, which its create request carries), then a profile with that LLM saved
// and activated (PUT /api/profiles/scripted, its activate call), as its onboarding's LLM step does.
// A stand-in for that page only, named so in the suite and the docs.
// Usage: node canvas_llm.mjs CANVAS_PACKAGE_DIR BACKEND_URL API_KEY LLM_BASE_URL
// Prints {"saved": true} once the agent-server took both.
const [pkg, host, apiKey, llmBaseUrl] = process.argv.slice(2);
if (!llmBaseUrl) {
  console.error('usage: canvas_llm.mjs CANVAS_PACKAGE_DIR BACKEND_URL API_KEY LLM_BASE_URL');
  process.exit(64);
}
const dist = `${pkg}/dist`;

// What a browser page gives Canvas's modules: its storages and its location.
class MemoryStorage {
  #m = new Map();
  get length() { return this.#m.size; }
  key(i) { return [...this.#m.keys()][i] ?? null; }
  getItem(k) { return this.#m.has(k) ? this.#m.get(k) : null; }
  setItem(k, v) { this.#m.set(k, String(v)); }
  removeItem(k) { this.#m.delete(k); }
  clear() { this.#m.clear(); }
}
globalThis.localStorage = new MemoryStorage();
globalThis.sessionStorage = new MemoryStorage();
globalThis.window ??= {
  localStorage: globalThis.localStorage,
  sessionStorage: globalThis.sessionStorage,
  location: { protocol: 'http:', host: 'localhost:8000', hostname: 'localhost', origin: 'http://localhost:8000', search: '' },
};

// Canvas's services call the active backend of its registry: the window's agent-server.
const registry = await import(`${dist}/api/backend-registry/active-store.js`);
const Settings = (await import(`${dist}/api/settings-service/settings-service.api.js`)).default;
const Profiles = (await import(`${dist}/api/profiles-service/profiles-service.api.js`)).default;
registry.setRegisteredBackends([{ id: 'vscode-window', name: 'VS Code window', host, apiKey, kind: 'local' }]);
registry.setActiveSelection({ backendId: 'vscode-window', orgId: null });
const llm = { model: 'openai/scripted', base_url: llmBaseUrl, api_key: 'scripted-llm-key' };
if (!(await Settings.saveSettings({ agent_settings_diff: { llm } }))) {
  throw new Error('Canvas could not save the LLM settings on the backend');
}
await Profiles.saveProfile('scripted', { llm, include_secrets: true });
await Profiles.activateProfile('scripted');
const listed = await Profiles.listProfiles();
const active = listed.profiles.find((p) => p.name === listed.active_profile);
if (listed.active_profile !== 'scripted' || active?.api_key_set !== true) throw new Error(`Canvas's profiles: ${JSON.stringify(listed)}`);
console.log(JSON.stringify({ saved: true }));
process.exit(0);
