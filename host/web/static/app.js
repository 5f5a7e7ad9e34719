"use strict";
const sizes = ["A4","Letter","Legal","A3","A5","A0","A1","A2","A6","A7","A8","A9","B1","B2","B3","B4","B5","B6","Ledger","Tabloid","Executive","Folio"];
const $ = (id) => document.getElementById(id);
for (const s of sizes) { const o = document.createElement("option"); o.textContent = s; $("pageSize").append(o); }

function showError(el, body) {
  el.hidden = false;
  el.textContent = body.error + (body.hint ? " (" + body.hint + ")" : "");
}

// The page has no sign-up button where the server takes no sign-ups.
if ($("signup-btn")) {
  $("signup-btn").addEventListener("click", async () => {
    $("signup-err").hidden = true;
    const r = await fetch("/dashboard/signup", { method: "POST" });
    const body = await r.json();
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
  $("play-err").hidden = true; $("play-url").hidden = true;
  $("status").textContent = "rendering…";
  const req = { markdown: $("markdown").value, theme: $("theme").value, pageSize: $("pageSize").value,
    pageNumeration: $("pageNumeration").value, output: $("output").value };
  const t0 = performance.now();
  const r = await fetch("/v1/pdf/markdown", { method: "POST",
    headers: { "Authorization": "Bearer " + $("key").value, "Content-Type": "application/json" },
    body: JSON.stringify(req) });
  const ms = Math.round(performance.now() - t0);
  if (!r.ok) { $("status").textContent = ""; showError($("play-err"), await r.json()); return; }
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
});
