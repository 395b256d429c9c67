/**
 * Cancellations passed between instances (Redis in Plaza). Behind a load balancer a client's
 * notifications/cancelled is a POST of its own and may reach another instance than its call; that
 * instance passes it on, and the one relaying the call tells the upstream and ends the call.
 * Nothing is shared per call: only a cancellation costs a message. The same goes for a client's
 * answer to a request Plaza sent it during a call (the revision bridge's input rounds).
 */
export interface SharedCalls {
  /** Listens for cancellations of this instance's call under `key` until the returned function is called. */
  add(key: string, cancel: () => void): () => void;
  /** Passes a cancellation of the call under `key` to the instance relaying it. Never throws. */
  cancel(key: string): void;
  /**
   * Listens for messages to this instance's waiter under `key` (a client's answer to a request
   * Plaza sent it on a call's stream, POSTed to another instance) until the returned function is called.
   */
  listen?(key: string, deliver: (payload: string) => void): () => void;
  /** Passes `payload` to the instance waiting under `key`. Never throws. */
  deliver?(key: string, payload: string): void;
}
