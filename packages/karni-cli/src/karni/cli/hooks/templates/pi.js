// The extension: Pi calls these handlers; all decisions are Karni's.
export default function karniHistory(pi) {
  const pending = new Map(); // toolCallId -> the brief to hand over with the tool's result
  const projectBriefs = new Map(); // session id -> this run's project-level brief (a promise)

  function session(ctx) {
    const manager = ctx.sessionManager;
    return {
      cwd: ctx.cwd,
      sessionId: manager && manager.getSessionId ? manager.getSessionId() : undefined,
      sessionFile: manager && manager.getSessionFile ? manager.getSessionFile() : undefined,
    };
  }

  pi.on("tool_call", async (event, ctx) => {
    if (!EDIT_TOOLS.has(event.toolName)) return undefined;
    const answer = await askKarni("pi", "tool_call", {
      ...session(ctx),
      toolName: event.toolName,
      toolCallId: event.toolCallId,
      input: event.input,
    });
    if (!answer) return undefined;
    if (answer.block) return { block: true, reason: answer.brief };
    pending.set(event.toolCallId, answer.brief);
    return undefined;
  });

  pi.on("tool_result", async (event) => {
    const brief = pending.get(event.toolCallId);
    if (brief === undefined) return undefined;
    pending.delete(event.toolCallId);
    return { content: [...(event.content || []), { type: "text", text: brief }] };
  });

  pi.on("before_agent_start", async (event, ctx) => {
    const payload = session(ctx);
    const key = payload.sessionId || "";
    if (!projectBriefs.has(key)) {
      projectBriefs.set(key, askKarni("pi", "before_agent_start", payload));
    }
    const answer = await projectBriefs.get(key);
    if (!answer) return undefined;
    return { systemPrompt: `${event.systemPrompt}\n\n${answer.brief}` };
  });

  for (const name of ["agent_end", "session_shutdown"]) {
    pi.on(name, async (_event, ctx) => {
      const payload = session(ctx);
      // The run is over: the next one asks again, and Karni hands the same
      // project brief byte for byte plus what was learnt since (docs/hooks.md).
      projectBriefs.delete(payload.sessionId || "");
      await askKarni("pi", name, payload);
    });
  }
}
