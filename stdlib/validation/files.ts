/**
 * Uploads: `@image`, `@document` and `@mime` judge the type sniffed from the file's first bytes
 * (never its name or the client's Content-Type); `@extension` judges the name; `@max_size` the
 * byte count, and tells the runtime where to stop reading.
 */
import { DOCUMENT_TYPES, IMAGE_TYPES, UploadedFile, type Arbitrary, type FastCheck, type Literal, type Value } from '../../plugins/sdk.js';
import { showLiteral, type ValidatorTable } from './common.js';
import { FILE_KINDS, MAX_SAMPLE_PADDING, fileName, fileSamples, fileStem, filesOfSize, kindsWhere } from './file-samples.js';
import { formatByteSize, parseByteSize } from './sizes.js';

/** Largest file a `@max_size` arbitrary generates: enough to cross small limits, cheap to generate. */
const MAX_GENERATED_SIZE = 64 * 1024;
/** `@max_size` limits up to this size get rejecting samples (limit + 1 .. limit + 4096 bytes); larger ones would be costly. */
const MAX_REJECTED_LIMIT = 1024 * 1024;
const REJECT_OVERSHOOT = 4096;
/** An extension as `@extension` takes it: letters and digits, inner dots (`tar.gz`), optional leading dot. */
const EXTENSION = /^\.?[a-z0-9]+(?:\.[a-z0-9]+)*$/i;
const MIME = /^[a-z0-9][a-z0-9.+-]*\/(?:\*|[a-z0-9][a-z0-9.+-]*)$/i;
/** Types the sniffer can answer: anything else could never match. */
const DETECTABLE: ReadonlySet<string> = new Set([...IMAGE_TYPES, ...DOCUMENT_TYPES, 'application/zip', 'application/octet-stream']);
/** Extensions rejecting samples pick from when they are not among the allowed ones. */
const OTHER_EXTENSIONS = ['exe', 'txt', 'png', 'pdf', 'bin', 'zip', 'gz', 'html', 'jpeg'];

const FILE = ['file'] as const;

function isFile(v: Value): v is UploadedFile {
  return v instanceof UploadedFile;
}

/** `'image/*'` matches every `image/...` type; anything else matches itself (case-insensitively). */
function mimeMatcher(patterns: readonly Literal[]): (type: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const t = String(p).toLowerCase();
    if (t.endsWith('/*')) prefixes.push(t.slice(0, -1));
    else exact.add(t);
  }
  return (type) => exact.has(type) || prefixes.some((prefix) => type.startsWith(prefix));
}

/** Lower-case extensions without the leading dot. */
function extensionsOf(args: readonly Literal[]): string[] {
  return args.map((a) => String(a).toLowerCase().replace(/^\./, ''));
}

/** The base name (after any `/` or `\`) ends in `.ext` and has something before that. */
function hasExtension(name: string, extensions: readonly string[]): boolean {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1).toLowerCase();
  return extensions.some((ext) => base.length > ext.length + 1 && base.endsWith(`.${ext}`));
}

function sizeLimit(args: readonly Literal[]): number {
  return typeof args[0] === 'string' ? (parseByteSize(args[0]) ?? 0) : 0;
}

/** Files whose sniffed type passes / fails `test`; null when no kind does. */
function kindSamples(fc: FastCheck, test: (mime: string) => boolean): Arbitrary<unknown> | null {
  const kinds = kindsWhere(test);
  return kinds.length === 0 ? null : fileSamples(fc, kinds);
}

/** "a", "a or b", "a, b or c". */
function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** `@image`, `@document`, `@mime`, `@max_size` and `@extension`. */
export const FILE_VALIDATORS: ValidatorTable = {
  image: {
    types: FILE,
    params: [],
    doc: 'The upload is an image by its magic bytes: PNG, JPEG, GIF, WebP, BMP, TIFF, AVIF, HEIC or ICO (SVG is refused: it can carry scripts).',
    build: () => (v) => isFile(v) && IMAGE_TYPES.has(v.type),
    message: () => 'must be an image (PNG, JPEG, GIF, WebP, BMP, TIFF, AVIF, HEIC or ICO)',
    schema: () => ({ contentMediaType: 'image/*' }),
    arbitraries: {
      accepts: (fc) => kindSamples(fc, (t) => IMAGE_TYPES.has(t))!,
      rejects: (fc) => kindSamples(fc, (t) => !IMAGE_TYPES.has(t)),
    },
  },

  document: {
    types: FILE,
    params: [],
    doc: 'The upload is a document by its magic bytes: PDF, Word/Excel/PowerPoint (OOXML or legacy OLE), OpenDocument, RTF or plain UTF-8 text.',
    build: () => (v) => isFile(v) && DOCUMENT_TYPES.has(v.type),
    message: () => 'must be a document (PDF, Word, Excel, PowerPoint, OpenDocument, RTF or plain text)',
    schema: () => ({ 'x-mime-types': [...DOCUMENT_TYPES] }),
    arbitraries: {
      accepts: (fc) => kindSamples(fc, (t) => DOCUMENT_TYPES.has(t))!,
      rejects: (fc) => kindSamples(fc, (t) => !DOCUMENT_TYPES.has(t)),
    },
  },

  mime: {
    types: FILE,
    params: [{ name: 'types', type: 'text', rest: true, doc: "MIME types such as 'image/png', or 'image/*' for every image type." }],
    doc: "The type sniffed from the upload's magic bytes is one of the given MIME types ('image/*' covers every image type).",
    checkArgs: (args) => {
      if (args.length === 0) return '@mime needs at least one MIME type';
      for (const a of args) {
        if (typeof a !== 'string' || !MIME.test(a)) return `@mime needs MIME types like 'image/png' or 'image/*', got ${showLiteral(a)}`;
        const matches = mimeMatcher([a]);
        if (![...DETECTABLE].some(matches)) return `@mime(${showLiteral(a)}) can never match: uploads are recognised as ${[...DETECTABLE].join(', ')}`;
      }
      return null;
    },
    build: (args) => {
      const matches = mimeMatcher(args);
      return (v) => isFile(v) && matches(v.type);
    },
    message: (args) => `must be a file of type ${orList(args.map(String))}`,
    schema: (args) =>
      args.length === 1 && !String(args[0]).endsWith('/*') ? { contentMediaType: String(args[0]).toLowerCase() } : { 'x-mime-types': args.map(String) },
    arbitraries: {
      accepts: (fc, args) => kindSamples(fc, mimeMatcher(args))!,
      rejects: (fc, args) => {
        const matches = mimeMatcher(args);
        return kindSamples(fc, (t) => !matches(t));
      },
    },
  },

  max_size: {
    types: FILE,
    params: [{ name: 'size', type: 'text', doc: "The largest upload, e.g. '5MB', '500 KB', '1.5MB', '100' (bytes); KB/MB/GB are 1024-based." }],
    doc: 'The upload has at most the given size (KB, MB and GB are 1024-based); reading stops once a larger upload passes the limit.',
    checkArgs: (args) =>
      typeof args[0] === 'string' && parseByteSize(args[0]) !== null
        ? null
        : `@max_size needs a size like '5MB', '500KB', '1.5 MB' or '1000' (bytes), greater than 0 and at most 1 TB, got ${showLiteral(args[0] ?? null)}`,
    build: (args) => {
      const limit = sizeLimit(args);
      return (v) => isFile(v) && v.size <= limit;
    },
    message: (args) => `must be at most ${formatByteSize(sizeLimit(args))}`,
    schema: (args) => ({ 'x-max-size': sizeLimit(args) }),
    bounds: (args) => ({ size: { max: sizeLimit(args) } }),
    uploadLimit: (args) => sizeLimit(args),
    arbitraries: {
      accepts: (fc, args) => filesOfSize(fc, fc.integer({ min: 0, max: Math.min(sizeLimit(args), MAX_GENERATED_SIZE) })),
      rejects: (fc, args) => {
        const limit = sizeLimit(args);
        return limit > MAX_REJECTED_LIMIT ? null : filesOfSize(fc, fc.integer({ min: limit + 1, max: limit + REJECT_OVERSHOOT }));
      },
    },
  },

  extension: {
    types: FILE,
    params: [{ name: 'extensions', type: 'text', rest: true, doc: "Allowed extensions, with or without the dot: 'pdf', '.png', 'tar.gz'." }],
    doc: "The upload's file name ends in one of the given extensions, case-insensitive (the name is the client's claim: pair it with @image, @document or @mime).",
    checkArgs: (args) => {
      if (args.length === 0) return '@extension needs at least one extension';
      const bad = args.find((a) => typeof a !== 'string' || !EXTENSION.test(a));
      return bad === undefined ? null : `@extension needs extensions like 'png' or '.tar.gz', got ${showLiteral(bad)}`;
    },
    build: (args) => {
      const extensions = extensionsOf(args);
      return (v) => isFile(v) && hasExtension(v.name, extensions);
    },
    message: (args) => `must be a ${orList(extensionsOf(args).map((e) => `.${e}`))} file`,
    schema: (args) => ({ 'x-extensions': extensionsOf(args) }),
    arbitraries: {
      accepts: (fc, args) => fileSamples(fc, FILE_KINDS, { names: fileName(fc, extensionsOf(args)) }),
      rejects: (fc, args) => {
        const extensions = extensionsOf(args);
        const others = OTHER_EXTENSIONS.filter((e) => !hasExtension(`x.${e}`, extensions));
        const names = fc.oneof(fileStem(fc), fc.constantFrom(...extensions.map((e) => `.${e}`)), ...(others.length > 0 ? [fileName(fc, others)] : []));
        return fileSamples(fc, FILE_KINDS, { names: names.filter((n) => !hasExtension(n, extensions)), maxPadding: MAX_SAMPLE_PADDING });
      },
    },
  },
};
