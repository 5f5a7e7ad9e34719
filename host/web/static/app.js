"use strict";
const sizes = ["A4","Letter","Legal","A3","A5","A0","A1","A2","A6","A7","A8","A9","B1","B2","B3","B4","B5","B6","Ledger","Tabloid","Executive","Folio"];
const $ = (id) => document.getElementById(id);
for (const s of sizes) { const o = document.createElement("option"); o.textContent = s; $("pageSize").append(o); }

function showError(el, body) {
  el.hidden = false;
  el.textContent = body.error + (body.hint ? " (" + body.hint + ")" : "");
}

// errorBody reads an error answer. A proxy in front of mdpress (its own
// 413 or 502 page) or a dropped connection gives no JSON body, and the
// visitor must still be told what happened.
async function errorBody(r) {
  try {
    const body = await r.json();
    if (body && typeof body.error === "string") return body;
  } catch (_) { /* not the API's JSON */ }
  return { error: "the server answered " + r.status + (r.statusText ? " " + r.statusText : "") };
}

function unreachable(err) {
  return { error: "could not reach the server", hint: String(err && err.message || err) };
}

// The page has no sign-up button where the server takes no sign-ups.
if ($("signup-btn")) {
  $("signup-btn").addEventListener("click", async () => {
    $("signup-err").hidden = true;
    let r, body;
    try {
      r = await fetch("/dashboard/signup", { method: "POST" });
      body = r.ok ? await r.json() : await errorBody(r);
    } catch (err) { showError($("signup-err"), unreachable(err)); return; }
    if (!r.ok) { showError($("signup-err"), body); return; }
    $("signup-user").textContent = body.userId;
    $("signup-key").textContent = body.apiKey;
    $("signup-curl").textContent = "curl -H 'Authorization: Bearer " + body.apiKey + "' -H 'Content-Type: application/json' \\\n  -d '{\"markdown\":\"# Hi\"}' " + location.origin + "/v1/pdf/markdown -o hi.pdf";
    $("signup-out").hidden = false;
    $("key").value = body.apiKey;
    $("signup-btn").disabled = true;
  });
}

// The key is shown once: a page restored from the back-forward cache
// would show it again to whoever uses the browser next.
addEventListener("pagehide", () => {
  for (const id of ["signup-user", "signup-key", "signup-curl"]) { if ($(id)) $(id).textContent = ""; }
  if ($("signup-out")) $("signup-out").hidden = true;
  $("key").value = "";
});

let lastURL = null;
$("play").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const submit = $("play").querySelector("button[type=submit]");
  $("play-err").hidden = true; $("play-url").hidden = true;
  $("status").textContent = "rendering…";
  // One conversion at a time: a second click would be charged a second credit.
  submit.disabled = true;
  try {
    await render();
  } catch (err) {
    $("status").textContent = "";
    showError($("play-err"), unreachable(err));
  } finally {
    submit.disabled = false;
  }
});

async function render() {
  const req = { markdown: $("markdown").value, theme: $("theme").value, pageSize: $("pageSize").value,
    pageNumeration: $("pageNumeration").value, output: $("output").value };
  // Optional: an empty lang is a 400, so a blank field sends none.
  const lang = $("lang").value.trim();
  if (lang) req.lang = lang;
  const t0 = performance.now();
  const r = await fetch("/v1/pdf/markdown", { method: "POST",
    headers: { "Authorization": "Bearer " + $("key").value, "Content-Type": "application/json" },
    body: JSON.stringify(req) });
  const ms = Math.round(performance.now() - t0);
  if (!r.ok) { $("status").textContent = ""; showError($("play-err"), await errorBody(r)); return; }
  if (lastURL) URL.revokeObjectURL(lastURL);
  if (req.output === "url") {
    const body = await r.json();
    $("play-link").href = body.url; $("play-link").textContent = body.url; $("play-url").hidden = false;
    $("preview").src = body.url;
  } else {
    lastURL = URL.createObjectURL(await r.blob());
    $("preview").src = lastURL;
  }
  $("preview").hidden = false;
  $("status").textContent = "done in " + ms + " ms";
}
