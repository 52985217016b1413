#!/usr/bin/env node
// Writes src/schema.ts from the Engram API's OpenAPI schema (JSON): a TypeScript type for every component schema,
// the `Operations` interface (each operation's method, path, parameters, body and answer types) and the
// `OPERATIONS` table the client sends from. No dependencies: the schema uses a small part of OpenAPI 3.0.
//
//   node scripts/generate-types.mjs schema.json            # writes src/schema.ts
//   node scripts/generate-types.mjs schema.json --check    # exits 1 when src/schema.ts differs from it
//
// The schema comes from the server: `manage.py spectacular --format openapi-json --file schema.json`.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const OUTPUT = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "schema.ts");
// A component named like a JavaScript global would shadow it where it is imported.
const RENAMES = { Error: "ErrorBody" };
const METHODS = ["get", "put", "post", "patch", "delete"];

const typeName = (ref) => {
  const name = ref.replace("#/components/schemas/", "");
  return RENAMES[name] ?? name;
};

const isIdentifier = (name) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
const key = (name) => (isIdentifier(name) ? name : JSON.stringify(name));

/** A description as a JSDoc comment; drf-spectacular's generated enum lists ("* `a` - a") are left out. */
function doc(text, indent) {
  if (!text) return "";
  const lines = text
    .split("\n")
    .filter((line) => !/^\* `.*` - /.test(line))
    .join("\n")
    .trim()
    .replaceAll("*/", "*\\/")
    .split("\n");
  if (!lines.join("").trim()) return "";
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ""}`).join("\n")}\n${indent} */\n`;
}

function union(types) {
  const unique = [...new Set(types)];
  return unique.length ? unique.join(" | ") : "never";
}

function objectType(schema, indent) {
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = Object.entries(schema.properties ?? {}).map(
    ([name, property]) =>
      `${doc(property.description, inner)}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${tsType(property, inner)};`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false && lines.length) {
    lines.push(`${inner}[key: string]: ${extra === true ? "unknown" : tsType(extra, inner)};`);
  }
  if (!lines.length) {
    if (extra === undefined || extra === false)
      return schema.properties ? "Record<string, never>" : "Record<string, unknown>";
    return `Record<string, ${extra === true ? "unknown" : tsType(extra, indent)}>`;
  }
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** The TypeScript type of a schema object, written at `indent`. */
function tsType(schema, indent = "") {
  let type;
  if (schema.$ref) type = typeName(schema.$ref);
  else if (schema.allOf) type = schema.allOf.map((part) => tsType(part, indent)).join(" & ");
  else if (schema.oneOf || schema.anyOf)
    type = union((schema.oneOf ?? schema.anyOf).map((part) => tsType(part, indent)));
  else if (schema.enum) type = union(schema.enum.map((value) => JSON.stringify(value)));
  else if (schema.type === "string") type = schema.format === "binary" ? "Uint8Array" : "string";
  else if (schema.type === "integer" || schema.type === "number") type = "number";
  else if (schema.type === "boolean") type = "boolean";
  else if (schema.type === "array") {
    const item = tsType(schema.items ?? {}, indent);
    type = isIdentifier(item) ? `${item}[]` : `Array<${item}>`;
  } else if (schema.type === "object" || schema.properties) type = objectType(schema, indent);
  else type = "unknown";
  return schema.nullable && type !== "unknown" ? `${type} | null` : type;
}

function component(name, schema) {
  const comment = schema.enum ? "" : doc(schema.description, "");
  if ((schema.type === "object" || schema.properties) && schema.properties) {
    return `${comment}export interface ${name} ${objectType(schema, "")}\n`;
  }
  return `${comment}export type ${name} = ${tsType(schema, "")};\n`;
}

function parameters(operation, where, indent) {
  const found = (operation.parameters ?? []).filter((parameter) => parameter.in === where);
  if (!found.length) return "Record<string, never>";
  const lines = found.map(
    (parameter) =>
      `${doc(parameter.description, `${indent}  `)}${indent}  ${key(parameter.name)}${
        parameter.required || where === "path" ? "" : "?"
      }: ${tsType(parameter.schema ?? {}, `${indent}  `)};`,
  );
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** What the client sends and expects: JSON, bytes (with their content type) or nothing. */
function bodyOf(operation, indent) {
  const content = operation.requestBody?.content ?? {};
  if (content["application/json"]) return { kind: "json", type: tsType(content["application/json"].schema, indent) };
  const other = Object.keys(content).find((type) => type !== "multipart/form-data") ?? Object.keys(content)[0];
  if (other) return { kind: "bytes", type: "Uint8Array | string", contentType: other };
  return { kind: "none", type: "undefined" };
}

function responseOf(operation, indent) {
  const answers = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith("2"));
  const json = answers.map(([, answer]) => answer.content?.["application/json"]).filter(Boolean);
  if (json.length) return { kind: "json", type: union(json.map((content) => tsType(content.schema, indent))) };
  if (answers.some(([, answer]) => Object.keys(answer.content ?? {}).length))
    return { kind: "bytes", type: "Uint8Array" };
  return { kind: "none", type: "void" };
}

export function generate(schema) {
  const out = [
    "// Generated by scripts/generate-types.mjs from the Engram API's OpenAPI schema: do not edit by hand.",
    `// ${schema.info?.title ?? "Engram API"} ${schema.info?.version ?? ""}, OpenAPI ${schema.openapi}. README.md says how to regenerate it.`,
    "",
  ];
  for (const [name, body] of Object.entries(schema.components?.schemas ?? {})) {
    out.push(component(RENAMES[name] ?? name, body));
  }
  const operations = [];
  for (const [path, item] of Object.entries(schema.paths ?? {})) {
    for (const method of METHODS) {
      if (item[method]) operations.push({ path, method: method.toUpperCase(), operation: item[method] });
    }
  }
  out.push("/** Every operation of the API: its method, path template, parameters, body and answer. */");
  out.push("export interface Operations {");
  for (const { path, method, operation } of operations) {
    const indent = "    ";
    const summary = doc(operation.summary, "  ").trimEnd();
    if (summary) out.push(summary);
    out.push(`  ${operation.operationId}: {`);
    out.push(`${indent}method: ${JSON.stringify(method)};`);
    out.push(`${indent}path: ${JSON.stringify(path)};`);
    out.push(`${indent}pathParams: ${parameters(operation, "path", indent)};`);
    out.push(`${indent}query: ${parameters(operation, "query", indent)};`);
    out.push(`${indent}headers: ${parameters(operation, "header", indent)};`);
    out.push(`${indent}body: ${bodyOf(operation, indent).type};`);
    out.push(`${indent}response: ${responseOf(operation, indent).type};`);
    out.push("  };");
  }
  out.push("}");
  out.push("");
  out.push("export type OperationId = keyof Operations;");
  out.push("");
  out.push("/** How each operation is sent: `body`/`response` say JSON, bytes or nothing. */");
  out.push("export const OPERATIONS = {");
  for (const { path, method, operation } of operations) {
    const body = bodyOf(operation, "");
    const fields = [
      `method: ${JSON.stringify(method)}`,
      `path: ${JSON.stringify(path)}`,
      `body: ${JSON.stringify(body.kind)}`,
      ...(body.contentType ? [`contentType: ${JSON.stringify(body.contentType)}`] : []),
      `response: ${JSON.stringify(responseOf(operation, "").kind)}`,
    ];
    out.push(`  ${operation.operationId}: { ${fields.join(", ")} },`);
  }
  out.push("} as const satisfies {");
  out.push("  [K in OperationId]: {");
  out.push('    method: Operations[K]["method"];');
  out.push('    path: Operations[K]["path"];');
  out.push('    body: "json" | "bytes" | "none";');
  out.push("    contentType?: string;");
  out.push('    response: "json" | "bytes" | "none";');
  out.push("  };");
  out.push("};");
  return `${out.join("\n")}\n`;
}

function main(argv) {
  const [schemaPath, flag] = argv;
  if (!schemaPath || (flag && flag !== "--check")) {
    console.error("usage: node scripts/generate-types.mjs SCHEMA.json [--check]");
    return 2;
  }
  const text = generate(JSON.parse(readFileSync(schemaPath, "utf8")));
  if (flag === "--check") {
    let current = "";
    try {
      current = readFileSync(OUTPUT, "utf8");
    } catch {}
    if (current === text) return 0;
    const ours = current.split("\n");
    const theirs = text.split("\n");
    const line = theirs.findIndex((value, index) => value !== ours[index]);
    console.error(
      `src/schema.ts does not match the API's OpenAPI schema (first difference at line ${line + 1}:\n` +
        `  has:    ${ours[line] ?? "(end of file)"}\n  schema: ${theirs[line] ?? "(end of file)"}).\n` +
        "Regenerate it: see clients/typescript/README.md, 'When the API changes'.",
    );
    return 1;
  }
  writeFileSync(OUTPUT, text);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
