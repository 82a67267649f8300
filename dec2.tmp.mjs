import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
const appm = await import('/work/main/dist/vm/runtime/app.js');
const { cachePath } = await import('/work/main/dist/vm/cache.js');
const { Unpackr, Packr } = await import('msgpackr');
const dir = '/tmp/corp';
const files = appm.findRouteFiles(dir);
const bufs = files.map(f => readFileSync(cachePath(dir, f)));
const u = new Unpackr({ useRecords: false, mapsAsObjects: true });
let t = performance.now();
const all = bufs.map(b => { const out=[]; u.unpackMultiple(b, v => { out.push(v); }); return out; });
console.log('unpack', (performance.now()-t).toFixed(1));
if (process.env.SIZES) {
const p = new Packr({ useRecords: false, variableMapSize: true });
const body = all[0][4];
for (const k of Object.keys(body)) console.log(k, p.pack(body[k]).length);
for (const c of body.chunks) { console.log('chunk', Object.fromEntries(Object.keys(c).map(k => [k, p.pack(c[k]).length]))); }
for (const r of body.routes) { console.log('route', Object.fromEntries(Object.keys(r).map(k => [k, p.pack(r[k]).length]))); }
console.log(JSON.stringify(body.chunks[0].refs).slice(0,300)); console.log(JSON.stringify(body.chunks[0].consts).slice(0,600));
}
