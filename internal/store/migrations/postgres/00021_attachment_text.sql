-- +goose Up
-- A PDF attachment's text, read by internal/pdf when the crawler stores
-- it: the text of every page (OCR of scanned pages only where the site
-- asks for it), the file's class (text, scanned, mixed, empty), its page
-- count, and why no text was read when none was (encrypted, malformed,
-- over a limit, OCR busy, a tool missing). Not a PDF: all empty.
ALTER TABLE attachment ADD COLUMN text_content text NOT NULL DEFAULT '';
ALTER TABLE attachment ADD COLUMN text_class varchar(10) NOT NULL DEFAULT '' CHECK (text_class IN ('', 'text', 'scanned', 'mixed', 'empty'));
ALTER TABLE attachment ADD COLUMN page_count integer NOT NULL DEFAULT 0 CHECK (page_count >= 0);
ALTER TABLE attachment ADD COLUMN text_error text NOT NULL DEFAULT '';
-- attachments: {ocr: true} in the site's YAML: scanned pages of its PDF
-- attachments are read with tesseract (off by default: a page of OCR
-- takes seconds of a core).
ALTER TABLE crawl_site ADD COLUMN attachment_ocr boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE crawl_site DROP COLUMN attachment_ocr;
ALTER TABLE attachment DROP COLUMN text_error;
ALTER TABLE attachment DROP COLUMN page_count;
ALTER TABLE attachment DROP COLUMN text_class;
ALTER TABLE attachment DROP COLUMN text_content;
