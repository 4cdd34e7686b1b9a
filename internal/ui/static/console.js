// The console's own script. Every page works without it; it only opens the
// catalog's column preview in a dialog while htmx reads the column.
document.addEventListener("htmx:beforeRequest", function (e) {
  var body = e.detail.target;
  if (!body || body.id !== "preview-body") return;
  body.innerHTML = '<p class="muted">正在读取栏目最新一页（按礼貌限速排队，可能需要几秒）…</p>';
  var dialog = body.closest("dialog");
  if (dialog && !dialog.open) dialog.showModal();
});
document.addEventListener("htmx:responseError", function (e) {
  var body = e.detail.target;
  if (!body || body.id !== "preview-body") return;
  var p = document.createElement("p");
  p.className = "err-text";
  p.textContent = "预览失败（HTTP " + e.detail.xhr.status + "）。请稍后重试。";
  body.replaceChildren(p);
});
