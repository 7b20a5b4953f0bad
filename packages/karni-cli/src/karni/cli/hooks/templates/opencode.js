// The plugin: OpenCode calls these hooks; all decisions are Karni's.
export const KarniHistory = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const pending = new Map(); // callID -> the brief to hand over with the tool's result
  const projectBriefs = new Map(); // sessionID -> this turn's project-level brief (a promise)
  return {
    "tool.execute.before": async (input, output) => {
      if (!EDIT_TOOLS.has(input.tool)) return;
      const answer = await askKarni("opencode", "tool.execute.before", {
        cwd,
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: output.args,
      });
      if (!answer) return;
      if (answer.block) throw new Error(answer.brief);
      pending.set(input.callID, answer.brief);
    },
    "tool.execute.after": async (input, output) => {
      const brief = pending.get(input.callID);
      if (brief === undefined) return;
      pending.delete(input.callID);
      output.output = `${output.output}\n\n${brief}`;
    },
    "experimental.chat.system.transform": async (input, output) => {
      const key = input.sessionID || "";
      if (!projectBriefs.has(key)) {
        const payload = { cwd, sessionID: input.sessionID };
        projectBriefs.set(key, askKarni("opencode", "experimental.chat.system.transform", payload));
      }
      const answer = await projectBriefs.get(key);
      if (answer) output.system.push(answer.brief);
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const sessionID = event.properties ? event.properties.sessionID : undefined;
      // The turn is over: the next one asks again, and Karni hands the same
      // project brief byte for byte plus what was learnt since (docs/hooks.md).
      projectBriefs.delete(sessionID || "");
      await askKarni("opencode", "session.idle", { cwd, sessionID });
    },
  };
};
