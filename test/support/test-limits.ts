/**
 * Limits a test sets itself when it pins them: every test's client and every test upstream is on
 * 127.0.0.1, so the listing write limit and the per-host probe bound would otherwise count a whole
 * file's listings and probes as one client's and one host's.
 */
export const TEST_LIMITS: Record<string, string> = {
  PLAZA_RATE_LIMIT_LISTINGS_PER_MIN: '1000000',
  PLAZA_PROBE_HOST_REQUESTS_PER_MIN: '1000000',
  PLAZA_RATE_LIMIT_OAUTH_PER_MIN: '1000000',
};
