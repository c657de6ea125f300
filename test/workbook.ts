import { strToU8, unzipSync, zipSync } from "fflate";

/**
 * A minimal Excel workbook (.xlsx) for the import tests: one sheet, text as inline strings, numbers
 * as numbers, and a `Date` as Excel's day number styled as a date (as Excel writes one).
 */
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const column = (i: number) => String.fromCharCode(65 + i);
const EXCEL_EPOCH = Date.UTC(1899, 11, 30);

function cell(value: unknown, ref: string): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return `<c r="${ref}" s="1"><v>${(value.getTime() - EXCEL_EPOCH) / 86_400_000}</v></c>`;
  if (typeof value === "number") return `<c r="${ref}"><v>${value}</v></c>`;
  if (typeof value === "boolean") return `<c r="${ref}" t="b"><v>${value ? 1 : 0}</v></c>`;
  return `<c r="${ref}" t="inlineStr"><is><t>${escape(String(value))}</t></is></c>`;
}

export function workbook(rows: unknown[][]): Uint8Array<ArrayBuffer> {
  const sheetRows = rows.map((row, r) => `<row r="${r + 1}">${row.map((value, c) => cell(value, `${column(c)}${r + 1}`)).join("")}</row>`).join("");
  const main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
  const rels = "http://schemas.openxmlformats.org/package/2006/relationships";
  const doc = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
  return new Uint8Array(zipSync({
    "[Content_Types].xml": strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
    ),
    "_rels/.rels": strToU8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${rels}"><Relationship Id="rId1" Type="${doc}/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
    "xl/workbook.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${main}" xmlns:r="${doc}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    "xl/_rels/workbook.xml.rels": strToU8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${rels}"><Relationship Id="rId1" Type="${doc}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${doc}/styles" Target="styles.xml"/></Relationships>`),
    "xl/styles.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${main}"><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>`),
    "xl/worksheets/sheet1.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${main}"><sheetData>${sheetRows}</sheetData></worksheet>`),
  }));
}

/** A zip whose one entry inflates to `bytes` (of spaces): what the inflation check must refuse unread. */
export const inflating = (bytes: number): Uint8Array<ArrayBuffer> => new Uint8Array(zipSync({ "xl/worksheets/sheet1.xml": strToU8(" ".repeat(bytes)) }, { level: 9 }));

export { XLSX_MEDIA as XLSX } from "../src/shared/import-formats";

/**
 * A workbook that lies: its one sheet inflates to `bytes`, but both its entry's header and the
 * archive's directory say it inflates to `declared`. What the server inflates must be counted, not read from these.
 */
export function lying(bytes: number, declared: number): Uint8Array<ArrayBuffer> {
  const zip = new Uint8Array(zipSync({ "xl/worksheets/sheet1.xml": new Uint8Array(bytes).fill(32) }, { level: 9 }));
  const view = new DataView(zip.buffer);
  for (let at = 0; at + 4 <= zip.byteLength; at++) {
    const signature = view.getUint32(at, true);
    if (signature === 0x04034b50) view.setUint32(at + 22, declared, true);
    if (signature === 0x02014b50) view.setUint32(at + 24, declared, true);
  }
  return zip;
}

/**
 * A workbook of a header and `rows` rows whose one cell names the same shared string, `text`: a
 * few bytes of XML a row, however long the string, so its lines come to `rows` times the string.
 */
export function sharing(text: string, rows: number): Uint8Array<ArrayBuffer> {
  const files = unzipSync(workbook([["Title"]]));
  const main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
  const cells = Array.from({ length: rows }, (_, r) => `<row r="${r + 2}"><c r="A${r + 2}" t="s"><v>0</v></c></row>`).join("");
  files["xl/worksheets/sheet1.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${main}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Title</t></is></c></row>${cells}</sheetData></worksheet>`);
  files["xl/sharedStrings.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${main}" count="${rows}" uniqueCount="1"><si><t>${text}</t></si></sst>`);
  const rels = new TextDecoder().decode(files["xl/_rels/workbook.xml.rels"]).replace("</Relationships>", '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>');
  files["xl/_rels/workbook.xml.rels"] = strToU8(rels);
  return new Uint8Array(zipSync(files, { level: 9 }));
}
