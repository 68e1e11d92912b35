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

  // The same rules as governance/policy/invisible.py and governance/portal/verbatim.py:
  // invisible characters, letters of another script inside a word, letters drawn like
  // punctuation and long runs of combining marks become marked \u escapes; long runs of
  // spaces are marked with their length.
  var HIDDEN = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\p{Cs}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
  var LETTER = /\p{L}/u;
  // Letters drawn like punctuation (PUNCTUATION_LOOK_ALIKES in governance/policy/invisible.py).
  var PUNCTUATION_LOOK_ALIKES = /[\ua78b\ua78c\u02b9\u02ba\u02bb\u02bc\u02bd\u02c8\u02ca\u02cb\u02ee\u01c0\u01c1\u01c3]/u;
  var COMBINING = /[\p{Mn}\p{Me}]/u;
  var LONG_COMBINING_RUN = 3;
  var LONG_SPACE_RUN = 4;
  var SCRIPTS = [
    "Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Nko",
    "Samaritan", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu",
    "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul",
    "Ethiopic", "Cherokee", "Canadian_Aboriginal", "Ogham", "Runic", "Khmer", "Mongolian",
    "Hiragana", "Katakana", "Bopomofo", "Han", "Yi", "Coptic", "Glagolitic", "Tifinagh", "Vai",
    "Lisu", "Osage", "Adlam", "Gothic", "Deseret", "Shavian",
  ];
  var SCRIPT_TESTS = SCRIPTS.map(function (name) {
    return new RegExp("^\\p{Script=" + name + "}$", "u");
  });
  var EAST_ASIAN = [
    ["Latin", "Han", "Hiragana", "Katakana"], ["Latin", "Han", "Bopomofo"], ["Latin", "Han", "Hangul"],
  ];

  function scriptOf(char) {
    for (var i = 0; i < SCRIPTS.length; i++) {
      if (SCRIPT_TESTS[i].test(char)) return SCRIPTS[i];
    }
    return "U+" + char.codePointAt(0).toString(16).toUpperCase();
  }

  function mixes(scripts) {
    if (scripts.length < 2) return false;
    return !EAST_ASIAN.some(function (allowed) {
      return scripts.every(function (s) { return allowed.indexOf(s) >= 0; });
    });
  }

  function isInvisible(char, layoutIsVisible) {
    if (char === " ") return false;
    if (layoutIsVisible && (char === "\t" || char === "\n")) return false;
    return HIDDEN.test(char);
  }

  // Code point index → why, as governance.policy.invisible.flagged computes it.
  function flagged(chars, layoutIsVisible) {
    var found = {};
    var i;
    for (i = 0; i < chars.length; i++) {
      if (isInvisible(chars[i], layoutIsVisible)) found[i] = "invisible";
      else if (PUNCTUATION_LOOK_ALIKES.test(chars[i])) found[i] = "punctuation-look-alike";
    }
    for (i = 0; i < chars.length;) {
      var j = i;
      while (j < chars.length && COMBINING.test(chars[j])) j++;
      if (j - i > LONG_COMBINING_RUN) {
        for (var k = i; k < j; k++) if (!found[k]) found[k] = "combining-run";
      }
      i = j > i ? j : i + 1;
    }
    for (i = 0; i < chars.length;) {
      var end = i;
      while (end < chars.length && (LETTER.test(chars[end]) || COMBINING.test(chars[end]) || /\p{Mc}/u.test(chars[end]))) end++;
      if (end > i) {
        var letters = [];
        for (var m = i; m < end; m++) if (LETTER.test(chars[m])) letters.push(m);
        var scripts = [];
        letters.forEach(function (n) {
          var s = scriptOf(chars[n]);
          if (scripts.indexOf(s) < 0) scripts.push(s);
        });
        var ascii = letters.every(function (n) { return chars[n].charCodeAt(0) < 128; });
        if (!ascii && mixes(scripts)) {
          var main = scripts.indexOf("Latin") >= 0 ? "Latin" : scriptOf(chars[letters[0]]);
          letters.forEach(function (n) {
            if (scriptOf(chars[n]) !== main && !found[n]) found[n] = "mixed-script";
          });
        }
        i = end;
      } else {
        i++;
      }
    }
    return found;
  }

  function escaped(char) {
    var code = char.codePointAt(0);
    var hex = code.toString(16);
    return code <= 0xffff ? "\\u" + ("0000" + hex).slice(-4) : "\\U" + ("00000000" + hex).slice(-8);
  }

  function visible(text, layoutIsVisible) {
    var chars = Array.from(String(text));
    var found = flagged(chars, layoutIsVisible);
    var fragment = document.createDocumentFragment();
    var plainRun = "";
    function flush() {
      fragment.appendChild(document.createTextNode(plainRun));
      plainRun = "";
    }
    for (var i = 0; i < chars.length;) {
      if (chars[i] === " ") {
        var j = i;
        while (j < chars.length && chars[j] === " ") j++;
        var indentation = layoutIsVisible && i > 0 && chars[i - 1] === "\n";
        if (j - i >= LONG_SPACE_RUN && !indentation) {
          flush();
          var spaces = document.createElement("mark");
          spaces.className = "fb-spaces";
          spaces.dataset.spaces = String(j - i);
          spaces.title = (j - i) + " spaces";
          spaces.textContent = chars.slice(i, j).join("");
          fragment.appendChild(spaces);
        } else {
          plainRun += chars.slice(i, j).join("");
        }
        i = j;
      } else if (found[i]) {
        flush();
        var mark = document.createElement("mark");
        mark.className = "fb-invisible";
        mark.textContent = escaped(chars[i]);
        fragment.appendChild(mark);
        i++;
      } else {
        plainRun += chars[i];
        i++;
      }
    }
    flush();
    return fragment;
  }

  // For the browser tests, which check that this and the server flag the same characters.
  window.fluidboxVisibleText = function (text, layoutIsVisible) {
    var holder = document.createElement("div");
    holder.appendChild(visible(text, layoutIsVisible));
    return holder.innerHTML;
  };

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
      inner.appendChild(visible(text, false));
      td.appendChild(inner);
    }
    return td;
  }

  // Text fluidbox did not write that is not code (a username): marked like the rest.
  function shown(row, text) {
    var td = row.insertCell();
    if (text) td.appendChild(visible(text, false));
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
    shown(row, typeof d.decided_by === "string" ? d.decided_by : "");
    plain(row, d.latency_ms !== undefined && d.latency_ms !== null ? d.latency_ms + " ms" : "");
    var details = document.createElement("details");
    var summary = document.createElement("summary");
    summary.textContent = "data";
    var pre = document.createElement("pre");
    pre.className = "fb-code";
    pre.appendChild(visible(JSON.stringify(d, null, 2), true));
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
