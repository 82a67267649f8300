import { performance } from 'node:perf_hooks';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
const { Unpackr, Packr } = await import('msgpackr');
const appm = await import('/work/main/dist/vm/runtime/app.js');
const { cachePath } = await import('/work/main/dist/vm/cache.js');
const dir = '/tmp/corp';
const files = appm.findRouteFiles(dir);
const mode = process.argv[2];
if (mode === 'write') {
  const u = new Unpackr({ useRecords: false, mapsAsObjects: true });
  const p = new Packr({ useRecords: true, variableMapSize: true });
  mkdirSync('/tmp/rec', { recursive: true });
  files.forEach((f, i) => { const out=[]; u.unpackMultiple(readFileSync(cachePath(dir, f)), v => { out.push(v); }); writeFileSync(`/tmp/rec/${i}`, p.pack(out[4])); });
} else {
  const bufs = files.map((f, i) => readFileSync(`/tmp/rec/${i}`));
  console.log('bytes', bufs.reduce((a,b)=>a+b.length,0));
  const u = new Unpackr({ useRecords: true, mapsAsObjects: true });
  let t = performance.now();
  const all = bufs.map(b => u.unpack(b));
  console.log('unpack records', (performance.now()-t).toFixed(1));
  t = performance.now();
  const all2 = bufs.map(b => u.unpack(b));
  console.log('again', (performance.now()-t).toFixed(1));
}
