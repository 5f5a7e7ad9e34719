// mdtopdf-driver converts Markdown with md-to-pdf for BenchmarkVsMdToPdf,
// on md-to-pdf's fastest path: one browser and one asset server for the
// whole run, as a service built on md-to-pdf would keep them, rather than
// the browser per call of its mdToPdf() or the browser per run of its CLI.
//
// Protocol: one JSON request per stdin line, {"markdown": "..."}, with
// "out": "FILE" to have the PDF written there too; one JSON answer per
// stdout line, {"bytes": N} or {"error": "..."}.
// The first line written, {"ready": true}, says the browser is up.
//
//   node mdtopdf-driver.js MD_TO_PDF_DIR CHROMIUM
//
// MD_TO_PDF_DIR holds node_modules/md-to-pdf (make bench-deps installs it).
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

const [dir, chromium] = process.argv.slice(2);
const lib = (p) => require(path.join(dir, 'node_modules', 'md-to-pdf', 'dist', 'lib', p));
const puppeteer = require(path.join(dir, 'node_modules', 'puppeteer'));
const { defaultConfig } = lib('config');
const { convertMdToPdf } = lib('md-to-pdf');
const { serveDirectory, closeServer } = lib('serve-dir');

async function main() {
  // md-to-pdf serves the document's directory to the page; an empty one
  // here (serving a big directory slows every page load).
  const basedir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'mdtopdf-'));
  const server = await serveDirectory({ basedir, port: 0 });
  const config = {
    ...defaultConfig,
    basedir,
    port: server.address().port,
    dest: '', // the PDF comes back, nothing is written
    pdf_options: { ...defaultConfig.pdf_options },
  };
  // Root has no sandbox for Chromium, as for mdpress's render-chrome.
  const browser = await puppeteer.launch({ executablePath: chromium, args: ['--no-sandbox'] });
  const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
  out({ ready: true });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    try {
      const { markdown, out: file } = JSON.parse(line);
      // convertMdToPdf changes the config it is given: a copy per call.
      const cfg = { ...config, pdf_options: { ...config.pdf_options }, stylesheet: [...config.stylesheet] };
      const pdf = await convertMdToPdf({ content: markdown }, cfg, { browser });
      if (file) {
        fs.writeFileSync(file, pdf.content);
      }
      out({ bytes: pdf.content.length });
    } catch (e) {
      out({ error: String(e && e.message ? e.message : e) });
    }
  }
  await browser.close();
  await closeServer(server);
  fs.rmSync(basedir, { recursive: true, force: true });
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
