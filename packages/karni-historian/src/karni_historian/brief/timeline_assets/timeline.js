// The timeline page's script (karni_historian.brief.timeline_page inlines it).
// It reads the data block and builds every element with textContent: no text
// from the data is ever parsed as HTML (docs/historian/timeline.md).
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("timeline-data").textContent);
  var files = data.files || [];
  var sessions = data.sessions || [];
  var shapingByFile = new Map((data.shaping || []).map(function (entry) { return [entry.file, entry]; }));

  var HARNESS_COLOURS = ["#3b5bdb", "#e8590c", "#2b8a3e", "#ae3ec9", "#0c8599", "#d6336c", "#f08c00", "#5c940d"];
  var AUTHOR_COLOURS = ["#212529", "#7048e8", "#c2255c", "#1971c2", "#e67700", "#087f5b", "#862e9c", "#a61e4d"];
  var NOTE_LABELS = {
    failed: "Tried and failed or undone",
    decision: "Decided",
    constraint: "The user's rules for it",
    outcome: "Last outcome"
  };
  var MAX_SHAPED_FILES = 20;

  // Elements -----------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }

  // Append ``node`` to ``parent`` and return the node (``add`` returns the parent).
  function put(parent, node) {
    parent.appendChild(node);
    return node;
  }

  function colourOf(node, colour) {
    node.style.setProperty("--c", colour);
    return node;
  }

  // Times --------------------------------------------------------------------

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function day(ms) {
    var d = new Date(ms);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate());
  }

  function clock(ms) {
    var d = new Date(ms);
    return pad(d.getHours()) + ":" + pad(d.getMinutes());
  }

  function when(ms) { return ms === null || ms === undefined ? "" : day(ms) + " " + clock(ms); }

  function span(t0, t1) {
    if (t0 === null || t0 === undefined) return "no time recorded";
    if (t1 === null || t1 === undefined || t1 === t0) return when(t0);
    return when(t0) + " \u2013 " + (day(t0) === day(t1) ? clock(t1) : when(t1));
  }

  function duration(ms) {
    var minutes = Math.round(ms / 60000);
    if (minutes < 60) return minutes + " min";
    var hours = Math.round(minutes / 60);
    if (hours < 48) return hours + " h";
    var days = Math.round(hours / 24);
    return days < 60 ? days + " d" : Math.round(days / 30) + " mo";
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // Colours ------------------------------------------------------------------

  function palette(names, colours) {
    var found = new Map();
    names.forEach(function (name, i) {
      found.set(name, i < colours.length ? colours[i] : "hsl(" + Math.round((i * 137.508) % 360) + " 60% 42%)");
    });
    return found;
  }

  function unique(values) {
    return Array.from(new Set(values)).sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
  }

  var harnessColour = palette(unique(sessions.map(function (s) { return s.harness; })), HARNESS_COLOURS);
  var authors = unique(sessions.map(function (s) { return s.author; }));
  if (authors.indexOf(data.author) > 0) {  // the local user first, the teammates after
    authors.splice(authors.indexOf(data.author), 1);
    authors.unshift(data.author);
  }
  var authorColour = palette(authors, AUTHOR_COLOURS);

  function initials(name) {
    var words = String(name || "?").split(/[\s._@-]+/).filter(Boolean);
    var letters = words.slice(0, 2).map(function (w) { return Array.from(w)[0]; }).join("");
    return (letters || "?").toUpperCase();
  }

  // Header and legend ---------------------------------------------------------

  function episodeCount() {
    return sessions.reduce(function (n, s) { return n + s.episodes.length; }, 0);
  }

  function drawHeader() {
    document.getElementById("heading").textContent = "Agent history of " + (data.project || "this project");
    var dated = sessions.filter(function (s) { return s.t0 !== null; });
    var parts = [plural(sessions.length, "session"), plural(episodeCount(), "episode")];
    if (dated.length) {
      var first = dated.reduce(function (t, s) { return Math.min(t, s.t0); }, Infinity);
      var last = dated.reduce(function (t, s) { return Math.max(t, s.t1 === null ? s.t0 : s.t1); }, -Infinity);
      parts.push(day(first) === day(last) ? day(first) : day(first) + " to " + day(last));
    }
    if (data.generated) parts.push("page made " + when(data.generated));
    document.getElementById("summary").textContent = parts.join(" \u00b7 ");
    var legend = document.getElementById("legend");
    add(legend, legendGroup("Harness", harnessColour, false), legendGroup("Author", authorColour, true));
    add(legend, add(el("span", "legend-group"), add(el("span"), el("span", "swatch hatched"), "not condensed yet")));
  }

  function legendGroup(title, colours, round) {
    var group = add(el("span", "legend-group"), el("span", "legend-title", title));
    colours.forEach(function (colour, name) {
      add(group, add(el("span"), colourOf(el("span", round ? "swatch round" : "swatch"), colour), name));
    });
    return group;
  }

  // The chart -----------------------------------------------------------------

  var lanes = new Map();      // session id -> lane element
  var segments = new Map();   // "session/episode id" (or "session/tail") -> segment
  var cards = new Map();      // session id -> card
  var details = new Map();    // "session/episode id" -> <details>

  function place(node, x0, x1) {
    node.style.left = (x0 * 100).toFixed(3) + "%";
    node.style.width = (Math.max(x1 - x0, 0) * 100).toFixed(3) + "%";
    return node;
  }

  // The axis: a mark at every tick, a label where it does not run into the
  // previous one (measured once the axis is in the page), and each gap's length.
  function drawAxis(inner) {
    var axis = el("div", "axis");
    add(inner, add(el("div", "axis-row"), el("div"), axis));
    var gapRight = -Infinity;
    (data.axis.gaps || []).forEach(function (gap) {
      var label = el("span", "gap-label", duration(gap.t1 - gap.t0));
      label.title = duration(gap.t1 - gap.t0) + " without a session";
      label.style.left = (((gap.x0 + gap.x1) / 2) * 100).toFixed(3) + "%";
      add(axis, label);
      var box = label.getBoundingClientRect();
      if (box.left < gapRight + 6) axis.removeChild(label);
      else gapRight = box.right;
    });
    var lastRight = -Infinity;
    var lastDay = "";
    (data.axis.ticks || []).forEach(function (tick) {
      var mark = el("span", "tick");
      mark.style.left = (tick.x * 100).toFixed(3) + "%";
      add(axis, mark);
      var newDay = day(tick.t) !== lastDay;
      var text = tick.step >= 86400000 ? day(tick.t) : newDay ? day(tick.t) + " " + clock(tick.t) : clock(tick.t);
      var label = el("span", newDay ? "tick-label day" : "tick-label", text);
      label.style.left = (tick.x * 100).toFixed(3) + "%";
      if (tick.x > 0.94) label.classList.add("end");
      add(axis, label);
      var box = label.getBoundingClientRect();
      if (box.left < lastRight + 8) {
        axis.removeChild(label);  // it would run into the previous label
        return;
      }
      lastRight = box.right;
      lastDay = day(tick.t);
    });
  }

  function segment(session, part, tail) {
    var colour = harnessColour.get(session.harness);
    var node = colourOf(place(el("button", tail ? "seg tail" : "seg"), part.x0, part.x1), colour);
    node.type = "button";
    var range = "messages " + part.start + "\u2013" + part.end;
    var title = tail ? "Not condensed yet" : part.title;
    node.title = title + "\n" + span(part.t0, part.t1) + " \u00b7 " + range;
    node.setAttribute("aria-label", title + ", " + range);
    var key = session.id + "/" + (tail ? "tail" : part.id);
    node.addEventListener("click", function () { reveal(key, session.id); });
    segments.set(key, node);
    return node;
  }

  function drawLane(session) {
    var lane = el("div", "lane");
    lane.dataset.session = session.id;
    var label = el("button", "lane-label");
    label.type = "button";
    var chip = colourOf(el("span", "author-chip", initials(session.author)), authorColour.get(session.author));
    chip.title = session.author;
    add(label, chip, el("span", "lane-title", session.title || "untitled session"));
    add(label, el("span", "lane-when", session.t0 === null ? "" : day(session.t0)));
    label.title = (session.title || "untitled session") + "\n" + session.harness + " \u00b7 " + session.author + " \u00b7 " + span(session.t0, session.t1);
    label.addEventListener("click", function () { reveal(null, session.id); });
    var track = el("div", "track");
    if (session.x0 === null) {
      add(track, el("span", "undated", "no times recorded"));
    } else {
      add(track, colourOf(place(el("span", "span-line"), session.x0, session.x1), harnessColour.get(session.harness)));
      session.episodes.forEach(function (episode) {
        if (episode.x0 !== null) add(track, segment(session, episode, false));
      });
      if (session.tail && session.tail.x0 !== null) add(track, segment(session, session.tail, true));
    }
    lanes.set(session.id, lane);
    return add(lane, label, track);
  }

  function drawChart() {
    var chart = document.getElementById("chart");
    if (!sessions.length) {
      add(chart, el("p", "empty", "No sessions are recorded yet: run \u201ckarni-historian ingest\u201d in the project, then make this page again."));
      return;
    }
    var inner = put(chart, el("div", "chart-inner"));
    drawAxis(inner);
    var body = put(inner, el("div", "lanes"));
    var overlay = put(body, el("div", "gap-overlay"));
    var width = overlay.getBoundingClientRect().width;
    (data.axis.gaps || []).forEach(function (gap) {
      if ((gap.x1 - gap.x0) * width >= 4) add(overlay, place(el("div", "gap-band"), gap.x0, gap.x1));
    });
    sessions.forEach(function (session) { add(body, drawLane(session)); });
  }

  // Sessions, each episode opening to its text --------------------------------

  function fileList(label, indices) {
    if (!indices.length) return null;
    var line = add(el("p", "files"), label + ": ");
    indices.forEach(function (index, i) {
      if (i) add(line, ", ");
      var code = el("code", null, files[index]);
      code.dataset.file = String(index);
      add(line, code);
    });
    return line;
  }

  function command(text) {
    return add(el("p", "command"), "Raw messages: ", el("code", null, text));
  }

  function drawEpisode(session, episode) {
    var box = el("details", "episode");
    var summary = el("summary");
    var title = add(el("span", "episode-title", episode.title || "untitled episode"));
    String(episode.type || "").split(",").forEach(function (kind) {
      if (kind.trim()) add(title, el("span", "episode-type", kind.trim()));
    });
    add(summary, el("span", "episode-when", span(episode.t0, episode.t1)), title,
        el("span", "episode-range", "messages " + episode.start + "\u2013" + episode.end));
    var body = el("div", "episode-body");
    add(body, el("p", "episode-text", episode.text || "(no text)"),
        fileList("Edited", episode.edited), fileList("Read", episode.read),
        command("karni-historian expand --session " + session.id + " " + episode.start + " " + episode.end));
    details.set(session.id + "/" + episode.id, box);
    return add(box, summary, body);
  }

  function drawSession(session) {
    var card = colourOf(el("article", "session"), harnessColour.get(session.harness));
    card.id = "session-" + session.id;
    add(card, el("h2", null, session.title || "untitled session"));
    var meta = el("p", "session-meta");
    add(meta, add(el("span", "badge"), colourOf(el("span", "swatch"), harnessColour.get(session.harness)), session.harness),
        add(el("span", "badge"), colourOf(el("span", "swatch round"), authorColour.get(session.author)), session.author),
        el("span", null, span(session.t0, session.t1)), el("span", null, plural(session.messages, "message")),
        session.model ? el("span", null, session.model) : null, el("span", "mono", session.id));
    add(card, meta);
    session.episodes.forEach(function (episode) { add(card, drawEpisode(session, episode)); });
    card.hiddenNote = el("p", "hidden-note");
    card.hiddenNote.hidden = true;
    add(card, card.hiddenNote);
    if (session.tail) {
      var tail = session.tail;
      var note = add(el("div", "tail-note"), el("p", null, "Messages " + tail.start + "\u2013" + tail.end + " (" + span(tail.t0, tail.t1) + ") are not condensed yet."));
      add(note, fileList("Edited", tail.edited), fileList("Read", tail.read),
          command("karni-historian expand --session " + session.id + " " + tail.start + " " + tail.end));
      card.tailNote = note;
      add(card, note);
    }
    cards.set(session.id, card);
    return card;
  }

  function drawSessions() {
    var list = document.getElementById("sessions");
    sessions.forEach(function (session) { add(list, drawSession(session)); });
  }

  function flash(node) {
    node.classList.remove("flash");
    void node.offsetWidth;  // restart the animation
    node.classList.add("flash");
  }

  function reveal(key, sessionId) {
    var box = key ? details.get(key) : null;
    var target = box || cards.get(sessionId);
    if (key && key.slice(-5) === "/tail") target = cards.get(sessionId).tailNote || cards.get(sessionId);
    if (!target) return;
    if (box) box.open = true;
    target.scrollIntoView({ block: "center" });
    flash(target);
  }

  // The file filter -----------------------------------------------------------

  function normalise(text) {
    var path = String(text || "").trim().replace(/\\/g, "/");
    while (path.indexOf("./") === 0) path = path.slice(2);
    return path.replace(/\/+$/, "");
  }

  // The files the filter names: the file itself or the files under a folder;
  // when none is named so, the files whose path contains the text.
  function chosenFiles(path) {
    var chosen = new Set();
    if (!path) return { set: chosen, exact: true };
    files.forEach(function (file, index) {
      if (file === path || file.indexOf(path + "/") === 0) chosen.add(index);
    });
    if (chosen.size) return { set: chosen, exact: true };
    var lower = path.toLowerCase();
    files.forEach(function (file, index) {
      if (file.toLowerCase().indexOf(lower) >= 0) chosen.add(index);
    });
    return { set: chosen, exact: false };
  }

  function touches(part, chosen) {
    return part.edited.some(function (f) { return chosen.has(f); }) || part.read.some(function (f) { return chosen.has(f); });
  }

  function applyFilter(text) {
    var path = normalise(text);
    var found = chosenFiles(path);
    var chosen = found.set;
    var counts = { sessions: 0, episodes: 0 };
    sessions.forEach(function (session) {
      var hit = !path || session.files.some(function (f) { return chosen.has(f); });
      lanes.get(session.id).hidden = !hit;
      cards.get(session.id).hidden = !hit;
      if (!hit) return;
      counts.sessions += 1;
      var hidden = 0;
      session.episodes.forEach(function (episode) {
        var touched = !path || touches(episode, chosen);
        var key = session.id + "/" + episode.id;
        markSegment(segments.get(key), path, touched);
        details.get(key).hidden = !touched;
        details.get(key).classList.toggle("hit", Boolean(path) && touched);
        if (touched && path) counts.episodes += 1;
        if (!touched) hidden += 1;
      });
      if (session.tail) {
        var tailTouched = !path || touches(session.tail, chosen);
        markSegment(segments.get(session.id + "/tail"), path, tailTouched);
        cards.get(session.id).tailNote.hidden = !tailTouched;
      }
      var note = cards.get(session.id).hiddenNote;
      note.hidden = hidden === 0;
      note.textContent = hidden ? plural(hidden, "other episode") + " of this session did not touch it." : "";
    });
    markFiles(chosen);
    showStatus(path, found, counts);
    drawShaped(path, chosen);
  }

  function markSegment(node, path, touched) {
    if (!node) return;
    node.classList.toggle("dim", Boolean(path) && !touched);
    node.classList.toggle("hit", Boolean(path) && touched);
  }

  function markFiles(chosen) {
    document.querySelectorAll("code[data-file]").forEach(function (code) {
      code.classList.toggle("match", chosen.has(Number(code.dataset.file)));
    });
  }

  function showStatus(path, found, counts) {
    var status = document.getElementById("filter-status");
    status.dataset.sessions = String(path ? counts.sessions : sessions.length);
    status.dataset.episodes = String(path ? counts.episodes : episodeCount());
    status.classList.toggle("none", Boolean(path) && counts.sessions === 0);
    if (!path) {
      status.textContent = "Showing every session. Type a file or folder to see only the history that touched it.";
    } else if (!counts.sessions) {
      status.textContent = "Nothing in this history touched \u201c" + path + "\u201d.";
    } else {
      var what = found.exact ? "\u201c" + path + "\u201d" : plural(found.set.size, "file") + " matching \u201c" + path + "\u201d";
      status.textContent = plural(counts.sessions, "session") + " and " + plural(counts.episodes, "episode") + " touched " + what + ".";
    }
  }

  // What shaped the file -------------------------------------------------------

  function counts(request, scale) {
    var bars = el("span", "bars");
    var plus = el("span", "bar add");
    var minus = el("span", "bar remove");
    plus.style.width = scale ? Math.max(request.added ? 2 : 0, (request.added / scale) * 64) + "px" : "0";
    minus.style.width = scale ? Math.max(request.removed ? 2 : 0, (request.removed / scale) * 64) + "px" : "0";
    add(bars, plus, minus);
    return add(el("span", "counts"), el("span", "count-add", "+" + request.added),
               el("span", "count-remove", "\u2212" + request.removed), bars);
  }

  function requestItem(request, scale) {
    var item = el("li", "request");
    var text = request.request
      ? el("span", "request-text", "\u201c" + request.request + "\u201d")
      : el("span", "request-text none", "(edits before the first request)");
    var link = el("button", "link", "session");
    link.type = "button";
    link.title = request.session + ", message " + request.message;
    link.addEventListener("click", function () { reveal(null, request.session); });
    return add(item, el("span", "request-when", when(request.time)), counts(request, scale), text, cards.has(request.session) ? link : el("span"));
  }

  function drawNotes(panel, notes) {
    Object.keys(NOTE_LABELS).forEach(function (kind) {
      var ofKind = notes.filter(function (note) { return note.kind === kind; });
      if (!ofKind.length) return;
      add(panel, el("h4", null, NOTE_LABELS[kind]));
      var list = put(panel, el("ul", "notes"));
      ofKind.forEach(function (note) {
        add(list, add(el("li"), note.time ? el("span", "note-when", day(note.time)) : null, note.text));
      });
    });
  }

  function drawShaped(path, chosen) {
    var panel = document.getElementById("shaped");
    panel.textContent = "";
    var entries = [];
    chosen.forEach(function (index) { if (shapingByFile.has(index)) entries.push(shapingByFile.get(index)); });
    panel.hidden = !path || !entries.length;
    if (panel.hidden) return;
    entries.sort(function (a, b) { return newest(b) - newest(a); });
    add(panel, el("h2", null, entries.length === 1 ? "What shaped " + files[entries[0].file] : "What shaped the " + entries.length + " files matching \u201c" + path + "\u201d"));
    var scale = 0;
    entries.forEach(function (entry) {
      entry.requests.forEach(function (r) { scale = Math.max(scale, r.added, r.removed); });
    });
    entries.slice(0, MAX_SHAPED_FILES).forEach(function (entry) {
      if (entries.length > 1) add(panel, el("h3", "mono", files[entry.file]));
      if (entry.requests.length) {
        var list = put(panel, el("ol", "requests"));
        entry.requests.forEach(function (request) { add(list, requestItem(request, scale)); });
      }
      drawNotes(panel, entry.notes);
    });
    if (entries.length > MAX_SHAPED_FILES) {
      add(panel, el("p", "more", plural(entries.length - MAX_SHAPED_FILES, "more file") + ": name one to see it."));
    }
  }

  function newest(entry) {
    return entry.requests.reduce(function (t, r) { return Math.max(t, r.time || 0); }, 0);
  }

  // Start ----------------------------------------------------------------------

  function start() {
    drawHeader();
    drawChart();
    drawSessions();
    var list = document.getElementById("file-list");
    files.slice().sort().forEach(function (file) {
      var option = el("option");
      option.value = file;
      add(list, option);
    });
    var input = document.getElementById("file-filter");
    input.value = data.selected || "";
    input.addEventListener("input", function () { applyFilter(input.value); });
    document.getElementById("clear-filter").addEventListener("click", function () {
      input.value = "";
      applyFilter("");
      input.focus();
    });
    applyFilter(input.value);
    document.body.dataset.ready = "true";
  }

  start();
})();
