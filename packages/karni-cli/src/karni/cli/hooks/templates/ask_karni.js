const KARNI = "karni";
const BEFORE_EDIT = __BEFORE_EDIT__;
const SHARE = __SHARE__; // `karni hooks install --share`: share at the end (your settings decide)
const EDIT_TOOLS = new Set(__EDIT_TOOLS__);
const TIMEOUT_MS = 30000;

// Runs `karni hook AGENT EVENT` with the event as JSON on stdin and resolves to
// its answer ({brief, block}), or to null when it has nothing to say. It never
// rejects: a failing hook must never break the host's tool call.
function askKarni(agent, event, payload) {
  return new Promise((resolve) => {
    let child;
    let timer;
    const finish = (answer) => {
      clearTimeout(timer);
      resolve(answer);
    };
    try {
      const share = SHARE ? ["--share"] : [];
      child = spawn(KARNI, ["hook", agent, event, "--before-edit", BEFORE_EDIT, ...share], {
        cwd: payload.cwd || undefined,
        stdio: ["pipe", "pipe", "ignore"],
        windowsHide: true,
      });
    } catch (error) {
      finish(null);
      return;
    }
    timer = setTimeout(() => {
      child.kill();
      finish(null);
    }, TIMEOUT_MS);
    let answer = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      answer += chunk;
    });
    child.on("error", () => finish(null));
    child.on("close", () => {
      try {
        const parsed = answer.trim() ? JSON.parse(answer) : null;
        finish(parsed && typeof parsed.brief === "string" ? parsed : null);
      } catch (error) {
        finish(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}
