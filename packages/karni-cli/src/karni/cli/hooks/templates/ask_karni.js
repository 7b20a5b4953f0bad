const KARNI = "karni";
const BEFORE_EDIT = __BEFORE_EDIT__;
const EDIT_TOOLS = new Set(__EDIT_TOOLS__);
const TIMEOUT_MS = 30000;

// Runs `karni hook AGENT EVENT` with the event as JSON on stdin and resolves to
// its answer ({brief, block}), or to null when it has nothing to say. It never
// rejects: a failing hook must never break the host's tool call.
function askKarni(agent, event, payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(KARNI, ["hook", agent, event, "--before-edit", BEFORE_EDIT], {
        cwd: payload.cwd || undefined,
        stdio: ["pipe", "pipe", "ignore"],
        timeout: TIMEOUT_MS,
        windowsHide: true,
      });
    } catch (error) {
      resolve(null);
      return;
    }
    let answer = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      answer += chunk;
    });
    child.on("error", () => resolve(null));
    child.on("close", () => {
      try {
        const parsed = answer.trim() ? JSON.parse(answer) : null;
        resolve(parsed && typeof parsed.brief === "string" ? parsed : null);
      } catch (error) {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}
