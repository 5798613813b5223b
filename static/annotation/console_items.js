// Item upload with a real progress bar: the file is sent with XMLHttpRequest so that the browser's
// upload progress events can drive the bar; the server answers with the upload's status fragment,
// which htmx then keeps polling (dry run, then the real import). Without JavaScript the form posts
// normally and the page shows the same fragment after a redirect.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const box = document.getElementById("upload-progress");
  const bar = document.getElementById("upload-bar");
  const percent = document.getElementById("upload-percent");
  const errors = document.getElementById("upload-errors");
  const jobs = document.getElementById("import-jobs");

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("HX-Request", "true");
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    box.classList.remove("hidden");
    bar.value = 0;
    percent.textContent = "0%";
    errors.innerHTML = "";
    xhr.upload.addEventListener("progress", (e) => {
      if (!e.lengthComputable) return;
      const p = Math.round((100 * e.loaded) / e.total);
      bar.value = p;
      percent.textContent = p + "%";
    });
    xhr.addEventListener("load", () => {
      box.classList.add("hidden");
      if (xhr.status === 201) {
        jobs.insertAdjacentHTML("afterbegin", xhr.responseText);
        htmx.process(jobs.firstElementChild);
        form.reset();
      } else {
        errors.innerHTML = xhr.responseText;
      }
    });
    xhr.addEventListener("error", () => {
      box.classList.add("hidden");
      errors.textContent = "The upload failed (network error). Nothing was imported.";
    });
    xhr.send(new FormData(form));
  });
});
