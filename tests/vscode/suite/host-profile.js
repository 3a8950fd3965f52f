// A CPU profile of the extension host this code runs in (node's inspector, in process), for the
// IDE bench (OH_IDE_BENCH_PROFILE=1): where the host's own time goes while the agent's actions
// run. Writes the .cpuprofile (open it in Chrome's DevTools) and prints the functions with the
// most self time as `oh-test bench profile` lines.
const fs = require('fs');
const inspector = require('inspector');

function post(session, method, params) {
  return new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
}

/** Self time per function (name and file:line), from the profile's samples. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const f = n.callFrame;
    const file = (f.url || '').split('/').slice(-2).join('/');
    const key = `${f.functionName || '(anonymous)'} ${file}${file ? `:${f.lineNumber + 1}` : ''}`;
    ms.set(key, (ms.get(key) || 0) + (profile.timeDeltas[i] || 0) / 1000);
  }
  return [...ms.entries()].sort((a, b) => b[1] - a[1]);
}

exports.startHostProfile = async () => {
  const session = new inspector.Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 200 });
  await post(session, 'Profiler.start');
  return {
    async stop(file) {
      const { profile } = await post(session, 'Profiler.stop');
      session.disconnect();
      fs.writeFileSync(file, JSON.stringify(profile));
      const times = selfTimes(profile);
      const total = times.reduce((a, [, v]) => a + v, 0);
      console.log(`oh-test bench profile: ${file}, ${(total / 1000).toFixed(1)} s sampled`);
      for (const [k, v] of times.slice(0, 25)) console.log(`oh-test bench profile self ${v.toFixed(0)} ms (${((100 * v) / total).toFixed(1)} %) ${k}`);
    },
  };
};
