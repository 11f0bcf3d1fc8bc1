/* A small, offline reader of /api/v1/openapi.json: every operation with its parameters, request body and
   responses, and every schema (no CDN-hosted Swagger UI). */
"use strict";

(function () {
  const $ = id => document.getElementById(id);

  function h(tag, cls, text, ...children) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const c of children) if (c) node.append(c);
    return node;
  }

  function typeOf(schema) {
    if (!schema) return "";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
    if (schema.type === "array") return typeOf(schema.items) + "[]";
    if (schema.enum) return schema.enum.map(v => JSON.stringify(v)).join(" | ");
    const limits = [];
    for (const k of ["minimum", "maximum", "minLength", "maxLength", "pattern", "format"]) {
      if (schema[k] !== undefined) limits.push(k + " " + schema[k]);
    }
    return (schema.type || schema.const || "any") + (limits.length ? " (" + limits.join(", ") + ")" : "");
  }

  function schemaLink(schema) {
    const name = typeOf(schema);
    const ref = schema && (schema.$ref || (schema.items && schema.items.$ref));
    if (!ref) return h("code", null, name);
    const a = h("a", null, name);
    a.href = "#schema-" + ref.split("/").pop();
    return a;
  }

  function paramsTable(params) {
    const table = h("table", "table");
    table.append(h("tr", null, null, h("th", null, "name"), h("th", null, "in"), h("th", null, "type"),
      h("th", null, "required"), h("th", null, "description")));
    for (const p of params) {
      table.append(h("tr", null, null, h("td", null, null, h("code", null, p.name)), h("td", null, p.in),
        h("td", null, typeOf(p.schema)), h("td", null, p.required ? "yes" : "no"),
        h("td", null, p.description || (p.schema && p.schema.description) || "")));
    }
    return table;
  }

  function operation(path, method, op) {
    const box = h("section", "card");
    box.id = "op-" + (op.operationId || method + path);
    box.append(h("h3", null, null, h("code", null, method.toUpperCase() + " " + path)),
               h("p", null, op.summary || ""), h("p", "muted", op.description || ""));
    if (op.parameters && op.parameters.length) box.append(h("h4", null, "Parameters"), paramsTable(op.parameters));
    const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
    if (body) box.append(h("h4", null, "Request body"), h("p", null, null, schemaLink(body.schema)));
    const rows = h("ul");
    for (const [code, r] of Object.entries(op.responses || {})) {
      const content = r.content || {};
      const types = Object.entries(content).map(([mime, c]) => c.schema ? typeOf(c.schema) : mime).join(", ");
      const li = h("li", null, code + " — " + (r.description || "") + (types ? " → " : ""));
      const json = content["application/json"];
      if (json && json.schema) li.append(schemaLink(json.schema));
      else if (types) li.append(h("code", null, types));
      rows.append(li);
    }
    box.append(h("h4", null, "Responses"), rows);
    return box;
  }

  function schemaBox(name, schema) {
    const box = h("section", "card");
    box.id = "schema-" + name;
    box.append(h("h3", null, name), h("p", "muted", schema.description || ""));
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    if (Object.keys(props).length) {
      const table = h("table", "table");
      table.append(h("tr", null, null, h("th", null, "field"), h("th", null, "type"), h("th", null, "required"),
        h("th", null, "description")));
      for (const [field, s] of Object.entries(props)) {
        table.append(h("tr", null, null, h("td", null, null, h("code", null, field)),
          h("td", null, null, schemaLink(s)), h("td", null, required.has(field) ? "yes" : "no"),
          h("td", null, s.description || "")));
      }
      box.append(table);
    } else if (schema.enum) {
      box.append(h("p", null, "one of: " + schema.enum.join(", ")));
    }
    return box;
  }

  document.addEventListener("DOMContentLoaded", async () => {
    const res = await fetch("/api/v1/openapi.json");
    const spec = await res.json();
    document.title = spec.info.title + " API " + spec.info.version;
    $("api-version").textContent = "OpenAPI " + spec.openapi + " · version " + spec.info.version;
    $("api-description").textContent = spec.info.description || "";
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) $("operations").append(operation(path, method, op));
    }
    const schemas = (spec.components && spec.components.schemas) || {};
    for (const name of Object.keys(schemas).sort()) $("schemas").append(schemaBox(name, schemas[name]));
  });
})();
