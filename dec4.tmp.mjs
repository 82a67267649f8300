import { performance } from 'node:perf_hooks';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
const { Unpackr, Packr } = await import('msgpackr');
const appm = await import('/work/main/dist/vm/runtime/app.js');
const { cachePath } = await import('/work/main/dist/vm/cache.js');
const dir = '/tmp/corp';
const files = appm.findRouteFiles(dir);
const mode = process.argv[2];
const p = new Packr({ useRecords: false, variableMapSize: true });
const u = new Unpackr({ useRecords: false, mapsAsObjects: true });
const variants = {
  full: (b) => b,
  nofields: (b) => ({ ...b, routes: b.routes.map(r => ({ ...r, body: p.pack(r.body), query: p.pack(r.query) })) }),
  norefs: (b) => ({ ...b, chunks: b.chunks.map(c => ({ ...c, refs: p.pack(c.refs) })) }),
  nofuncs: (b) => ({ ...b, functions: p.pack(b.functions) }),
  noguards: (b) => ({ ...b, routes: b.routes.map(r => ({ ...r, guards: p.pack(r.guards), segments: p.pack(r.segments) })) }),
  nocode: (b) => ({ ...b, chunks: b.chunks.map(c => ({ ...c, code: null, lines: null })) }),
  noresp: (b) => ({ ...b, routes: b.routes.map(r => ({ ...r, responses: null })) }),
  skeleton: (b) => ({ ...b, chunks: b.chunks.map(c => ({ ...c, refs: p.pack(c.refs) })), routes: b.routes.map(r => ({ ...r, body: p.pack(r.body), query: p.pack(r.query), guards: p.pack(r.guards), segments: p.pack(r.segments) })), functions: p.pack(b.functions) }),
};
if (mode === 'write') {
  mkdirSync('/tmp/var', { recursive: true });
  for (const [name, fn] of Object.entries(variants)) files.forEach((f, i) => { const out=[]; u.unpackMultiple(readFileSync(cachePath(dir, f)), v => { out.push(v); }); writeFileSync(`/tmp/var/${name}.${i}`, p.pack(fn(out[4]))); });
} else {
  const bufs = files.map((f, i) => readFileSync(`/tmp/var/${mode}.${i}`));
  let t = performance.now();
  const all = bufs.map(b => u.unpack(b));
  console.log(mode, 'bytes', bufs.reduce((a,b)=>a+b.length,0), 'unpack', (performance.now()-t).toFixed(1));
}
