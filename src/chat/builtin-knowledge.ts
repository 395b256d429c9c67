import type { KnowledgeDoc, KnowledgeSource } from './knowledge.ts';

type Entry = [id: string, link: string, title: string, text: string];

// What Plaza is, written from the spec (§1, §4, §5, §8): the assistant's answer when no website
// content is installed, and background knowledge next to it when there is.
const EN: Entry[] = [
  [
    'plaza',
    '/',
    'What Plaza is',
    "Plaza is an agent marketplace and gateway. It lists MCP tool connectors, stamps every tool call with the calling agent's AGIN identity card, keeps auditable receipts, runs a registry of installable AGPK software packages, and offers a public website API and a token API with chat completions.",
  ],
  [
    'mcp-marketplace',
    '/api/mcp/catalog',
    'MCP marketplace',
    'Anyone can list a streamable-HTTP MCP endpoint with metadata; there is no approval gate. Plaza probes each endpoint with tools/list; healthy endpoints show their tools in the online tools list. GET /api/mcp/catalog, /api/mcp/endpoints and /api/mcp/tools are public; POST /api/mcp/listings registers an endpoint.',
  ],
  [
    'discovery',
    '/api/mcp/endpoints',
    'Automatic discovery',
    'Plaza also pulls connectable streamable-http endpoints from the public MCP registry and probes them, more often when they are in demand. Listings store only metadata and the URL, never third-party credentials.',
  ],
  [
    'agin',
    '/api/agents',
    'AGIN identity and receipts',
    'Every tool call from an agent carries an AGIN identity card: agin_id, agent principal, display name and owner context. Providers log it and must not treat traffic as anonymous. A successful call leaves a receipt with the AGIN, the tool and the outcome, in a tamper-evident log.',
  ],
  [
    'agpk',
    '/agpk/v1/builder-standard.md',
    'AGPK packages',
    'AGPK is the package standard of the agent operating system: discover, choose, install, upgrade, uninstall and verify software. A package has agpk.json, payload, agent-commands.json with at least one command, a USAGE.md, DIGESTS and an optional signature; unsigned packages need an explicit human confirmation.',
  ],
  [
    'package-sources',
    '/api/agpk/sources',
    'Package source registry',
    'Publishers register package metadata (package_id, name, version, summary, vendor, HTTPS download link and sha256) with POST /api/agpk/sources. Plaza never stores package files. A worker checks reachability, the hash, the command surface and an open-source scan before a source becomes healthy and discoverable.',
  ],
  [
    'website-api',
    '/openapi.json',
    'Public website API',
    'Anonymous endpoints: GET /health, /api/products, /api/scenarios, /api/plans, /api/manifesto; POST /api/agent/intent recommends a scenario and plan for a prompt; POST /api/leads records a work e-mail and scenario (enterprise, commerce, developer or growth). A lead opens no paid entitlement.',
  ],
  [
    'token-api',
    '/api/v1/models',
    'Token API and chat',
    'POST /api/auth/guest-token gives a visitor a Bearer token valid for 86400 seconds (24 hours). POST /api/v1/chat/completions is OpenAI-compatible, with streaming; GET /api/agents lists agents. Account API keys are created after registration and work on the same routes.',
  ],
  [
    'security',
    '/',
    'Security and credentials',
    'All traffic uses HTTPS with TLS 1.2 or newer. Listings never embed customer credentials; callers supply their own third-party credentials per connection, and AGIN secrets are never put into connector env blocks.',
  ],
];

const ZH: Entry[] = [
  [
    'plaza',
    '/',
    'Plaza 是什么',
    'Plaza 是一个智能体市场与网关。它收录 MCP 工具连接器，为每一次工具调用附上调用方智能体的 AGIN 身份卡，保留可审计的回执，运行 AGPK 软件包的来源登记，并提供公开网站 API 以及带对话补全的令牌 API。',
  ],
  [
    'mcp-marketplace',
    '/api/mcp/catalog',
    'MCP 市场',
    '任何人都可以登记一个 streamable-HTTP MCP 端点及其元数据，无需审批。Plaza 用 tools/list 探测每个端点；健康的端点会把工具显示在在线工具列表中。GET /api/mcp/catalog、/api/mcp/endpoints 和 /api/mcp/tools 公开可读；POST /api/mcp/listings 用于登记端点。',
  ],
  [
    'discovery',
    '/api/mcp/endpoints',
    '自动发现',
    'Plaza 还会从公共 MCP 注册表拉取可连接的 streamable-http 端点并进行探测，需求越高探测越频繁。登记只保存元数据和 URL，从不保存第三方凭据。',
  ],
  [
    'agin',
    '/api/agents',
    'AGIN 身份与回执',
    '智能体的每次工具调用都携带 AGIN 身份卡：agin_id、智能体主体、显示名称和所属组织。提供方会记录它，不得把流量视为匿名。成功的调用会留下包含 AGIN、工具和结果的回执，记录在防篡改日志中。',
  ],
  [
    'agpk',
    '/agpk/v1/builder-standard.md',
    'AGPK 软件包',
    'AGPK 是智能体操作系统的软件包标准：发现、选择、安装、升级、卸载和校验软件。软件包包含 agpk.json、payload、至少有一个命令的 agent-commands.json、USAGE.md、DIGESTS 以及可选签名；未签名的软件包需要人工明确确认。',
  ],
  [
    'package-sources',
    '/api/agpk/sources',
    '软件包来源登记',
    '发布者通过 POST /api/agpk/sources 登记软件包元数据（package_id、名称、版本、简介、厂商、HTTPS 下载链接和 sha256）。Plaza 从不保存软件包文件。来源在成为健康、可发现之前，会经过可达性、哈希、命令面和开源扫描检查。',
  ],
  [
    'website-api',
    '/openapi.json',
    '公开网站 API',
    '匿名接口：GET /health、/api/products、/api/scenarios、/api/plans、/api/manifesto；POST /api/agent/intent 根据提示推荐场景和方案；POST /api/leads 记录工作邮箱和场景（enterprise、commerce、developer 或 growth）。线索不会开通任何付费权益。',
  ],
  [
    'token-api',
    '/api/v1/models',
    '令牌 API 与对话',
    'POST /api/auth/guest-token 为访客签发有效期 86400 秒（24 小时）的 Bearer 令牌。POST /api/v1/chat/completions 兼容 OpenAI，支持流式输出；GET /api/agents 列出智能体。注册账户后创建的 API 密钥可用于相同的接口。',
  ],
  [
    'security',
    '/',
    '安全与凭据',
    '所有流量使用 TLS 1.2 或更高版本的 HTTPS。登记信息从不包含客户凭据；调用方按连接提供自己的第三方凭据，AGIN 密钥绝不放入连接器的 env 配置中。',
  ],
];

/** Plaza's built-in product descriptions (English and Simplified Chinese). */
export function builtinKnowledge(): KnowledgeSource {
  const toDocs = (entries: Entry[]): KnowledgeDoc[] =>
    entries.map(([id, link, title, text]) => ({ id: `plaza:${id}`, title, text, link }));
  const en = toDocs(EN);
  const zh = toDocs(ZH);
  return { documents: async (locale) => (locale === 'zh-CN' ? zh : en) };
}
