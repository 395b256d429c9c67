-- Data: tools stored before probes left out a tool whose inputSchema is not an object schema in
-- MCP's shape are deleted, as the next probe of their endpoint would leave them out: with "type"
-- absent read as "object" (as /mcp serves it), the MCP SDK's ToolSchema asks for "type" "object",
-- "properties" (when present) an object of objects, "required" (when present) an array of strings.
-- An SDK client refuses a whole /mcp tools/list holding one such tool.
WITH "bad" AS (
  DELETE FROM "mcp_tools" t
   WHERE NOT (
     jsonb_typeof(t."input_schema") = 'object'
     AND (NOT (t."input_schema" ? 'type') OR t."input_schema" -> 'type' = '"object"'::jsonb)
     AND (NOT (t."input_schema" ? 'properties') OR (
       jsonb_typeof(t."input_schema" -> 'properties') = 'object'
       AND NOT EXISTS (SELECT 1 FROM jsonb_each(t."input_schema" -> 'properties') p WHERE jsonb_typeof(p.value) NOT IN ('object', 'array'))))
     AND (NOT (t."input_schema" ? 'required') OR (
       jsonb_typeof(t."input_schema" -> 'required') = 'array'
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(t."input_schema" -> 'required') r WHERE jsonb_typeof(r) <> 'string')))
   )
  RETURNING t."endpoint_id"
)
UPDATE "mcp_endpoints" e
   SET "tool_count" = GREATEST(0, e."tool_count" - d."n")
  FROM (SELECT "endpoint_id", count(*)::int AS "n" FROM "bad" GROUP BY "endpoint_id") d
 WHERE e."id" = d."endpoint_id";
