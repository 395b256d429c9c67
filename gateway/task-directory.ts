/** The call that created a task (MCP tasks): its id and the tool it named. */
export interface TaskCall {
  callId: string;
  tool: string;
}

/**
 * Where the gateway remembers task-augmented calls (MCP tasks): a call answered with a task is
 * stored under a key of provider, agent, upstream session and task id, so that the result a
 * caller fetches later with `tasks/result` carries the call's id and is receipted under its tool.
 * Shared by every instance.
 */
export interface TaskDirectory {
  remember(key: string, task: TaskCall): Promise<void>;
  /** The creating calls of those of `keys` that are known, by key. */
  callsOf(keys: string[]): Promise<Map<string, TaskCall>>;
}
