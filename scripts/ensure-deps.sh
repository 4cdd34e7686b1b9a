#!/usr/bin/env bash
# Installs what zhizhi's tests and demo need from Debian's packages when it is
# missing and we can (root): PostgreSQL for the second store dialect and
# Chromium for the browser tier, pdftotext for attachments, strace to watch
# Chromium's sockets, a Chinese font so that the console's screenshots show
# characters, not boxes, qpdf to check PDF structure, and tesseract with its
# Simplified Chinese model to read scanned PDF pages. Usage:
# ensure-deps.sh [postgres] [chromium] [poppler] [strace] [cjkfont] [qpdf] [ocr]
set -euo pipefail

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(postgres chromium)

missing=()
for w in "${want[@]}"; do
  case "$w" in
    postgres) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql) ;;
    chromium) command -v chromium >/dev/null 2>&1 || missing+=(chromium) ;;
    poppler)  command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils) ;;
    strace)   command -v strace >/dev/null 2>&1 || missing+=(strace) ;;
    cjkfont)  fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-wqy-microhei) ;;
    qpdf)     command -v qpdf >/dev/null 2>&1 || missing+=(qpdf) ;;
    ocr)      command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
              ls /usr/share/tesseract-ocr/*/tessdata/chi_sim.traineddata >/dev/null 2>&1 || missing+=(tesseract-ocr-chi-sim) ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "ensure-deps: missing Debian packages: ${missing[*]}; not root, so not installing them." >&2
  echo "ensure-deps: install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "ensure-deps: installing ${missing[*]} from Debian's packages (about half a minute)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${missing[@]}" >/dev/null
