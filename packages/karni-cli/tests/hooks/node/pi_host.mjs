// A minimal stand-in for Pi's extension host, built from the documented
// extension API: the module's default export receives `pi`, whose
// `pi.on(event, handler)` subscribes; handlers get (event, ctx), with
// ctx.cwd and ctx.sessionManager (getSessionId, getSessionFile). A `tool_call`
// handler may return { block, reason }; a `tool_result` handler may return a
// patch ({ content }); a `before_agent_start` handler may return { systemPrompt }.
// This host drives the handlers through a scenario (argv[3], JSON) and prints
// what each step produced as one JSON array on stdout.
//
// Steps: {"tool": NAME, "toolCallId", "input"} runs tool_call, the tool, then
// tool_result; {"prompt": TEXT} runs before_agent_start; {"event": NAME} runs
// any other event (agent_end, session_shutdown); {"write": PATH, "text"} writes
// a file between steps (history learnt meanwhile).
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [extensionPath, scenarioText] = process.argv.slice(2);
const scenario = JSON.parse(scenarioText);
const module = await import(pathToFileURL(extensionPath).href);
const handlers = new Map();
const pi = {
  on(name, handler) {
    if (!handlers.has(name)) handlers.set(name, []);
    handlers.get(name).push(handler);
  },
};
await module.default(pi);
const ctx = {
  cwd: scenario.cwd,
  hasUI: false,
  sessionManager: {
    getSessionId: () => scenario.sessionId,
    getSessionFile: () => scenario.sessionFile,
  },
};

async function emit(name, event) {
  const answers = [];
  for (const handler of handlers.get(name) || []) answers.push(await handler(event, ctx));
  return answers.filter((answer) => answer !== undefined);
}

async function runTool(step) {
  const call = { type: "tool_call", toolName: step.tool, toolCallId: step.toolCallId, input: step.input };
  const blocked = (await emit("tool_call", call)).find((answer) => answer.block);
  if (blocked) return { blocked: blocked.reason };
  let result = { ...call, type: "tool_result", content: [{ type: "text", text: "tool output" }], details: {}, isError: false };
  for (const patch of await emit("tool_result", result)) result = { ...result, ...patch };
  return { content: result.content };
}

async function startAgent(step) {
  let systemPrompt = "base prompt";
  for (const handler of handlers.get("before_agent_start") || []) {
    const answer = await handler({ type: "before_agent_start", prompt: step.prompt, systemPrompt }, ctx);
    if (answer && answer.systemPrompt !== undefined) systemPrompt = answer.systemPrompt;
  }
  return { systemPrompt };
}

const results = [];
for (const step of scenario.steps) {
  if (step.tool) results.push(await runTool(step));
  else if (step.prompt !== undefined) results.push(await startAgent(step));
  else if (step.write) {
    writeFileSync(step.write, step.text); // what changed between runs
    results.push({ wrote: step.write });
  } else if (step.event) {
    await emit(step.event, { type: step.event, reason: "quit" });
    results.push({ event: step.event });
  }
}
process.stdout.write(JSON.stringify(results));
