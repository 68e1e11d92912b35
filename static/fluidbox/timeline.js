// Run timeline: new ledger events arrive over the SSE stream (the portal session is enough)
// and are appended in seq order. The stream is bounded; EventSource reconnects with
// Last-Event-ID and the server resumes exactly after it.
(function () {
  "use strict";
  var table = document.getElementById("timeline");
  if (!table || !window.EventSource) return;
  var body = table.tBodies[0];
  var status = document.getElementById("live-status");
  var lastSeq = parseInt(table.dataset.lastSeq, 10) || 0;
  var filters = {
    type: table.dataset.filterType,
    decision: table.dataset.filterDecision,
    source: table.dataset.filterSource,
  };

  // The same characters governance/policy/invisible.py counts as invisible, shown as \u escapes.
  var HIDDEN = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\p{Cs}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

  function escaped(char) {
    var code = char.codePointAt(0);
    var hex = code.toString(16);
    return code <= 0xffff ? "\\u" + ("0000" + hex).slice(-4) : "\\U" + ("00000000" + hex).slice(-8);
  }

  function visible(text) {
    var fragment = document.createDocumentFragment();
    var plainRun = "";
    Array.from(String(text)).forEach(function (char) {
      if (char !== " " && char !== "\t" && char !== "\n" && HIDDEN.test(char)) {
        fragment.appendChild(document.createTextNode(plainRun));
        plainRun = "";
        var mark = document.createElement("mark");
        mark.className = "fb-invisible";
        mark.textContent = escaped(char);
        fragment.appendChild(mark);
      } else {
        plainRun += char;
      }
    });
    fragment.appendChild(document.createTextNode(plainRun));
    return fragment;
  }

  function decisionOf(d) {
    return d.decision || d.outcome || d.status || "";
  }

  function sourceOf(d) {
    return typeof d.source === "string" ? d.source : "";
  }

  function cell(row, text, className) {
    var td = row.insertCell();
    if (text !== "" && text !== null && text !== undefined) {
      var inner = document.createElement(className ? "span" : "code");
      if (className) inner.className = className;
      inner.appendChild(visible(text));
      td.appendChild(inner);
    }
    return td;
  }

  function plain(row, text) {
    var td = row.insertCell();
    td.textContent = text === null || text === undefined ? "" : String(text);
    return td;
  }

  function matches(ev) {
    var d = ev.data || {};
    if (filters.type && ev.type !== filters.type) return false;
    if (filters.decision && decisionOf(d) !== filters.decision) return false;
    if (filters.source && sourceOf(d) !== filters.source) return false;
    return true;
  }

  function append(ev) {
    if (ev.seq <= lastSeq) return;
    lastSeq = ev.seq;
    if (!matches(ev)) return;
    var empty = body.querySelector("tr.fb-empty");
    if (empty) empty.remove();
    var d = ev.data || {};
    var row = body.insertRow();
    row.className = "fb-event fb-new";
    row.dataset.seq = ev.seq;
    row.dataset.type = ev.type;
    plain(row, ev.seq).className = "fb-seq";
    plain(row, (ev.at || "").substring(11, 23));
    cell(row, ev.type);
    cell(row, d.tool || "");
    var decision = decisionOf(d);
    cell(row, decision, decision ? "fb-verdict fb-" + decision : "");
    plain(row, sourceOf(d));
    cell(row, d.rule ? d.rule.pattern + " → " + d.rule.action : "");
    plain(row, d.policy_version ? "v" + d.policy_version : "");
    plain(row, d.decided_by || "");
    plain(row, d.latency_ms !== undefined && d.latency_ms !== null ? d.latency_ms + " ms" : "");
    var details = document.createElement("details");
    var summary = document.createElement("summary");
    summary.textContent = "data";
    var pre = document.createElement("pre");
    pre.className = "fb-code";
    pre.appendChild(visible(JSON.stringify(d, null, 2)));
    details.appendChild(summary);
    details.appendChild(pre);
    row.insertCell().appendChild(details);
  }

  var source = new EventSource(table.dataset.streamUrl + "?after=" + lastSeq);
  source.onopen = function () {
    status.textContent = "live";
    status.classList.add("fb-on");
  };
  source.onerror = function () {
    status.textContent = "reconnecting…";
    status.classList.remove("fb-on");
  };
  source.onmessage = function (message) {
    append(JSON.parse(message.data));
  };
  // The server names each message after its event type; listen to every type it sends.
  [
    "run.created", "budget.reserved", "budget.settled", "budget.denied", "tool.requested",
    "tool.decision", "approval.requested", "approval.decided", "tool.brokered", "run.finished",
  ].forEach(function (type) {
    source.addEventListener(type, function (message) {
      append(JSON.parse(message.data));
    });
  });
})();
