import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

import { trace } from '@opentelemetry/api';
import { Router } from 'express';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import type { AccountService } from '../accounts/index.ts';
import {
  builtinKnowledge,
  cachedSource,
  catalogKnowledge,
  type ChatService,
  combineSources,
  type CompletionStream,
  createAgentsDirectory,
  createChatLimits,
  createChatService,
  createEmbeddedBackend,
  createModelRegistry,
  createUpstreamBackend,
  createUsageLog,
  type ModelEntry,
  sseEvent,
  websiteContentSource,
} from '../chat/index.ts';
import type { Database } from '../db/index.ts';
import {
  bodyFailure,
  hasBody,
  isPlainJsonRequest,
  readPlainJson,
  renderError,
  startErrorAnswer,
} from '../http/index.ts';
import { type Clock, isWellFormedRequestId, newRequestId, NotFoundError, ValidationError } from '../kernel/index.ts';
import type { SigningKeyStore } from '../keys/index.ts';
import type { Logger } from '../log/index.ts';
import { clientAddress, createRateLimiter, rateLimit } from '../rate-limit/index.ts';
import { createBearerVerifier, createGuestTokens, localInstanceIssuers, type Principal } from '../tokens/index.ts';
import { requireBearer, requireBearerOrSession, type SessionFallback } from './bearer-auth.ts';

/** What the token API is built from. */
export interface TokenApiDeps {
  config: Config;
  db: Database;
  log: Logger;
  clock: Clock;
  accounts: AccountService;
  keys: SigningKeyStore;
  /** Shared counters across instances; per-process counters without it. */
  redis?: Redis | undefined;
  /** Lets the signed-in session cookie list the account's agents (`GET /api/agents`), as on the agent routes. */
  session?: SessionFallback;
  /** Website content folder holding `<locale>.json` files. Default `config/content`. */
  contentDir?: string;
}

/** The 404 of `/api/v1/responses`: what to call instead, and how the common SDKs get there. */
const RESPONSES_API_ABSENT =
  "Plaza's token API offers Chat Completions (POST /api/v1/chat/completions), not OpenAI's Responses API. With the AI SDK use createOpenAI(...).chat(model) or @ai-sdk/openai-compatible; with LangChain leave useResponsesApi off; with the openai client call chat.completions.create.";

/** Audience of Plaza's token API access tokens. */
export const TOKEN_API_AUDIENCE = 'plaza-api';

/**
 * The token API (spec §4.7): `POST /api/auth/guest-token`, `POST /api/v1/chat/completions`,
 * `GET /api/v1/models` (and `/api/v1/models/{id}`), `GET /api/agents`. Errors render in the token shape via the error table.
 */
export function tokenApiRoutes(deps: TokenApiDeps): {
  router: Router;
  lane: (edge: CompletionEdge) => (req: IncomingMessage, res: ServerResponse) => boolean;
} {
  const { config, db, log, clock, accounts, keys, redis } = deps;
  const guestTokens = createGuestTokens({
    keys,
    clock,
    issuer: config.publicBaseUrl,
    alsoIssuer: localInstanceIssuers(config.publicBaseUrl),
    audience: TOKEN_API_AUDIENCE,
  });
  const verify = createBearerVerifier({ guestTokens, accounts });
  const knowledge = cachedSource(
    combineSources(
      [
        websiteContentSource(deps.contentDir ?? join(import.meta.dirname, '../../config/content')),
        builtinKnowledge(),
        catalogKnowledge(db.prisma),
      ],
      (error) => log.warn({ err: error }, 'a knowledge source of the embedded assistant failed'),
    ),
    30_000,
    () => clock.now(),
  );
  const upstream = config.llm.baseUrl
    ? createUpstreamBackend({
        baseUrl: config.llm.baseUrl,
        apiKey: config.llm.apiKey,
        timeoutMs: config.llm.timeoutMs,
        completionTimeoutMs: config.llm.completionTimeoutMs,
        maxRetries: config.llm.maxRetries,
        clock,
      })
    : undefined;
  const chat: ChatService = createChatService({
    registry: createModelRegistry({
      upstream: upstream !== undefined,
      models: config.llm.models,
      aliases: config.llm.aliases,
    }),
    backends: {
      embedded: createEmbeddedBackend({ knowledge, clock, defaultMaxTokens: Math.min(512, config.tokenApi.maxTokens) }),
      upstream,
    },
    limits: createChatLimits({ settings: config.tokenApi, redis, keyPrefix: config.rateLimits.keyPrefix, log }),
    usage: createUsageLog(db),
    log,
    maxTokens: config.tokenApi.maxTokens,
  });
  const agents = createAgentsDirectory(db.prisma);
  const guestTokenLimit = createRateLimiter({
    policy: { name: 'guest-token', limit: config.tokenApi.guestTokenRpmPerIp, windowSeconds: 60 },
    redis,
    keyPrefix: config.rateLimits.keyPrefix,
    log,
  });

  const router = Router();

  router.post(
    '/api/auth/guest-token',
    rateLimit(guestTokenLimit, { trustProxy: config.trustProxy !== false }),
    async (req, res) => {
      // The spec sends an empty JSON body; anything in it is a mistake worth reporting.
      if (req.body !== undefined && !(isPlainObject(req.body) && Object.keys(req.body).length === 0)) {
        throw new ValidationError('POST /api/auth/guest-token takes an empty JSON body.', {
          param: isPlainObject(req.body) ? (Object.keys(req.body)[0] ?? null) : null,
        });
      }
      const issued = await guestTokens.issue();
      res.setHeader('Cache-Control', 'no-store');
      res.json({ success: true, code: 'SUCCESS', message: 'Guest token issued.', data: issued });
    },
  );

  const modelObject = (m: ModelEntry) => ({
    id: m.id,
    object: 'model',
    created: 0,
    owned_by: m.backend === 'embedded' ? 'plaza' : 'upstream',
  });

  router.get('/api/v1/models', requireBearer(verify), (req, res) => {
    res.json({ object: 'list', data: chat.models(req.bearer!).map(modelObject) });
  });

  // OpenAI's `models.retrieve`; an unknown model is a 400 on `model`, as in chat completions.
  router.get('/api/v1/models/:model', requireBearer(verify), (req, res) => {
    const name = req.params['model'] ?? '';
    const entry = chat.models(req.bearer!).find((m) => m.id === name);
    if (!entry)
      throw new ValidationError(
        `The model '${name.slice(0, 200)}' does not exist; GET /api/v1/models lists the available ones.`,
        { param: 'model' },
      );
    res.json(modelObject(entry));
  });

  /** Answers a chat completion for `principal` from the parsed `body`, on Express's request or the lane's. */
  async function complete(
    req: IncomingMessage & { requestId: string },
    res: ServerResponse,
    principal: Principal,
    body: unknown,
  ): Promise<void> {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const outcome = await chat.complete({
      body,
      principal,
      ip: clientAddress(req, config.trustProxy !== false),
      requestId: req.requestId,
      locale: req.headers['accept-language'],
      signal: controller.signal,
    });
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    if (outcome.kind === 'json') {
      sendJson(res, 200, outcome.body, req.requestId);
      return;
    }
    writeStream(req, res, outcome.stream, controller.signal, log, config.llm.timeoutMs);
  }

  router.post('/api/v1/chat/completions', requireBearer(verify), async (req, res) => {
    await complete(req, res, req.bearer!, req.body);
  });

  // OpenAI's Responses API, which the AI SDK's default `createOpenAI(...)(model)` and LangChain's
  // `useResponsesApi` call: not offered, and the 404 says what is (any method, no bearer needed).
  router.all(['/api/v1/responses', '/api/v1/responses/{*rest}'], () => {
    throw new NotFoundError(RESPONSES_API_ABSENT);
  });

  router.get('/api/agents', requireBearerOrSession(verify, deps.session, 'agents:read'), async (req, res) => {
    const principal = req.bearer!;
    const list = await agents.visibleTo(principal.kind === 'account' ? principal.subject : undefined);
    res.json({
      success: true,
      code: 'SUCCESS',
      message: `${list.length} ${list.length === 1 ? 'agent' : 'agents'}.`,
      data: { agents: list },
    });
  });

  /**
   * `POST /api/v1/chat/completions` with a plain JSON body, answered before Express sees it: the
   * same edge (request id, log line, API and CORS headers), body reader, bearer check, handler and
   * error shapes, without Express's per-request work (its prototype swaps of the request and the
   * response, routing past every router before this one), which cost a completion more than its
   * own proxying. Anything else (another content type or encoding, a query string, a path spelled
   * differently, Plaza behind a proxy, whose client address Express derives) goes to Express.
   */
  const lane =
    (edge: CompletionEdge) =>
    (req: IncomingMessage, res: ServerResponse): boolean => {
      if (
        req.method !== 'POST' ||
        req.url !== '/api/v1/chat/completions' ||
        config.trustProxy !== false ||
        !hasBody(req) ||
        !isPlainJsonRequest(req)
      )
        return false;
      const given = req.headers['x-request-id'];
      const id = isWellFormedRequestId(given) ? given : newRequestId();
      const request: IncomingMessage & { requestId: string; body?: unknown } = Object.assign(req, { requestId: id });
      res.setHeader('X-Request-Id', id);
      // Named in traces as Express's instrumentation names its routes (a no-op without telemetry).
      trace
        .getActiveSpan()
        ?.setAttribute('http.route', '/api/v1/chat/completions')
        .updateName('POST /api/v1/chat/completions');
      edge(request, res);
      const fail = (error: unknown) => sendError(res, error, id, log);
      readPlainJson(request, config.bodyLimitBytes, (error) => {
        if (error !== undefined) return fail(bodyFailure(error, config.bodyLimitBytes));
        verify(req.headers.authorization)
          .then((principal) => complete(request, res, principal, request.body))
          .catch(fail);
      });
      return true;
    };

  return { router, lane };
}

/** The shared edge the lane runs first: the request log line and the fixed response headers. */
export type CompletionEdge = (req: IncomingMessage, res: ServerResponse) => void;

/** A JSON answer as Express's `res.json` sends it here (the body with its `request_id`). */
function sendJson(res: ServerResponse, status: number, body: Record<string, unknown>, requestId: string): void {
  const text = JSON.stringify('request_id' in body ? body : { ...body, request_id: requestId });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** The lane's error answer, as the app's error handler gives it on the token API. */
function sendError(res: ServerResponse, error: unknown, requestId: string, log: Logger): void {
  const rendered = startErrorAnswer(error, 'token', requestId, res, log);
  if (rendered) sendJson(res, rendered.status, rendered.body, requestId);
}

/** Gathered event text written at once rather than at the end of the event loop's turn. */
const FLUSH_NOW_CHARS = 64 * 1024;

/**
 * Writes a stream's SSE events with back-pressure; an error after the first byte becomes an
 * `error` event. The stream pushes its events as they arrive. A client that stops reading pauses
 * the upstream exchange with it, so a write that has not drained within `stallMs` (LLM_TIMEOUT_MS,
 * the silence allowed to the upstream too) ends the response, and through the abort the upstream
 * request.
 */
function writeStream(
  req: IncomingMessage & { requestId: string },
  res: ServerResponse,
  stream: CompletionStream,
  signal: AbortSignal,
  log: Logger,
  stallMs: number,
): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  // Events that arrive together (one upstream read often carries several) leave in one socket
  // write: they are gathered until this turn of the event loop is over (setImmediate), so nothing
  // waits for later upstream bytes. The headers go with the first write, or alone at the end of
  // this turn when no event is ready yet; the last events go with the end of the body. Each
  // write is a syscall on both sides, so a short completion costs one instead of three.
  // Back-pressure: a write the socket could not take pauses the stream until it drains.
  let pending = '';
  let paused = false;
  let stall: NodeJS.Timeout | undefined;
  // Everything below runs inside undici's callbacks, a timer or an event handler, where a throw is
  // an uncaught exception: it is logged and the response cut instead (the client sees the stream
  // end without [DONE]; the abort cuts the upstream request with it).
  const cut = (what: string, error: unknown) => {
    log.error({ err: error, request_id: req.requestId }, `chat stream cut: its ${what} failed`);
    res.destroy();
  };
  const onDrain = () => {
    clearTimeout(stall);
    res.off('drain', onDrain);
    paused = false;
    try {
      control.resume();
    } catch (error) {
      cut('resume', error);
    }
  };
  const onStall = () => {
    res.off('drain', onDrain);
    log.warn({ request_id: req.requestId, stall_ms: stallMs }, 'chat stream cut: the client stopped reading');
    res.destroy();
  };
  const write = () => {
    timer = undefined;
    if (signal.aborted) return;
    if (pending === '') {
      if (!res.headersSent) res.flushHeaders();
      return;
    }
    const text = pending;
    pending = '';
    if (!res.write(text) && !paused) {
      paused = true;
      control.pause();
      res.on('drain', onDrain);
      stall = setTimeout(onStall, stallMs);
    }
  };
  const flush = () => {
    try {
      write();
    } catch (error) {
      cut('write', error);
    }
  };
  let timer: NodeJS.Immediate | undefined = setImmediate(flush);
  const control = stream.start({
    events(batch) {
      if (signal.aborted) return;
      try {
        for (const data of batch) pending += sseEvent(data);
      } catch (error) {
        // Text past the longest string V8 holds: no event could carry it.
        pending = '';
        cut('events', error);
        return;
      }
      // Much at once (a long answer arriving faster than this turn ends) is written now, so a
      // client that does not keep up pauses the upstream before more of it is read.
      if (pending.length >= FLUSH_NOW_CHARS && !paused) {
        if (timer) clearImmediate(timer);
        flush();
        return;
      }
      timer ??= setImmediate(flush);
    },
    end(error) {
      if (timer) clearImmediate(timer);
      clearTimeout(stall);
      res.off('drain', onDrain);
      if (signal.aborted) {
        res.end();
        return;
      }
      try {
        if (error !== undefined) {
          const rendered = renderError(error, 'token', req.requestId);
          log.warn({ err: error, request_id: req.requestId }, 'chat stream failed after it started');
          pending += sseEvent(JSON.stringify({ error: rendered.body['error'], request_id: req.requestId }));
        }
        res.end(pending);
      } catch (thrown) {
        cut('end', thrown);
      }
    },
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
