// A minimal stand-in for OpenCode's plugin host, built from the documented
// plugin types: a plugin module exports async functions that take the
// PluginInput ({ client, project, directory, worktree, $ }) and return Hooks.
// This host loads the module, then drives its hooks through the steps of a
// scenario (argv[3], JSON) the way OpenCode does, and prints what each step
// produced as one JSON array on stdout.
//
//   node opencode_host.mjs PLUGIN.mjs '{"directory": "...", "steps": [...]}'
//
// Steps: {"tool": NAME, "sessionID", "callID", "args"} runs tool.execute.before,
// the tool, then tool.execute.after; {"system": true, "sessionID"} runs
// experimental.chat.system.transform; {"event": TYPE, "properties"} runs event.
// {"write": PATH, "text"} writes a file between steps (history learnt meanwhile).
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [pluginPath, scenarioText] = process.argv.slice(2);
const scenario = JSON.parse(scenarioText);
const module = await import(pathToFileURL(pluginPath).href);
const input = {
  client: {},
  project: { id: "test", worktree: scenario.directory },
  directory: scenario.directory,
  worktree: scenario.directory,
  $: undefined,
};
const plugins = [];
for (const exported of Object.values(module)) {
  if (typeof exported === "function") plugins.push(await exported(input));
}

async function runHook(name, ...args) {
  for (const hooks of plugins) {
    if (typeof hooks[name] === "function") await hooks[name](...args);
  }
}

async function runTool(step) {
  const call = { tool: step.tool, sessionID: step.sessionID, callID: step.callID };
  try {
    await runHook("tool.execute.before", call, { args: step.args });
  } catch (error) {
    return { blocked: error.message };
  }
  const output = { title: step.tool, output: "tool output", metadata: {} };
  await runHook("tool.execute.after", call, output);
  return { output: output.output };
}

const results = [];
for (const step of scenario.steps) {
  if (step.tool) {
    results.push(await runTool(step));
  } else if (step.system) {
    const output = { system: ["base prompt"] };
    await runHook("experimental.chat.system.transform", { sessionID: step.sessionID, model: {} }, output);
    results.push({ system: output.system });
  } else if (step.write) {
    writeFileSync(step.write, step.text); // what changed between turns
    results.push({ wrote: step.write });
  } else if (step.event) {
    await runHook("event", { event: { type: step.event, properties: step.properties || {} } });
    results.push({ event: step.event });
  }
}
process.stdout.write(JSON.stringify(results));
