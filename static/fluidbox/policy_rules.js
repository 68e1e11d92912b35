// Policy editor: move rules up and down, add rows. The ORDER inputs carry the order to the
// server, so the page also works without this script (type the numbers).
(function () {
  "use strict";
  var table = document.getElementById("rules");
  if (!table) return;
  var body = table.tBodies[0];
  var total = document.getElementById("id_rules-TOTAL_FORMS");

  function renumber() {
    Array.prototype.forEach.call(body.rows, function (row, i) {
      var order = row.querySelector("input[name$='-ORDER']");
      if (order) order.value = i + 1;
    });
  }

  body.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    var row = button.closest("tr");
    if (button.classList.contains("fb-up") && row.previousElementSibling) {
      body.insertBefore(row, row.previousElementSibling);
    } else if (button.classList.contains("fb-down") && row.nextElementSibling) {
      body.insertBefore(row.nextElementSibling, row);
    } else {
      return;
    }
    renumber();
    button.focus();
  });

  var add = document.getElementById("add-rule");
  var template = document.getElementById("rule-template");
  if (add && template && total) {
    add.addEventListener("click", function () {
      var index = parseInt(total.value, 10);
      var html = template.innerHTML.replace(/__prefix__/g, String(index));
      var holder = document.createElement("tbody");
      holder.innerHTML = html;
      var row = holder.querySelector("tr");
      body.appendChild(row);
      total.value = index + 1;
      renumber();
      var pattern = row.querySelector("input[name$='-pattern']");
      if (pattern) pattern.focus();
    });
  }
  renumber();
})();
