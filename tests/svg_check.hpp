// A small XML reader for the tests of SVG output: checks that a document is
// well-formed (every tag closed in order, attributes quoted, entities known)
// and returns its elements with their attributes and depth, so tests can
// count boxes and rows. Not a general XML parser: no DTDs, no CDATA.
#pragma once

#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace redflow::testing {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::size_t> ancestors;  // indices into the element list, outermost first
  std::string text;                    // character data directly inside (entities decoded)
  std::string attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
};

struct XmlDocument {
  std::string error;  // empty if well-formed
  std::vector<XmlElement> elements;
  std::vector<const XmlElement*> find(const std::string& name, const std::string& key = "", const std::string& value = "") const {
    std::vector<const XmlElement*> out;
    for (const auto& e : elements)
      if (e.name == name && (key.empty() || e.attr(key) == value)) out.push_back(&e);
    return out;
  }
};

inline bool decode_entities(const std::string& in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '<') return false;
    if (in[i] != '&') {
      out += in[i];
      continue;
    }
    const std::size_t semi = in.find(';', i);
    if (semi == std::string::npos) return false;
    const std::string ent = in.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') out += '?';
    else return false;
    i = semi;
  }
  return true;
}

inline XmlDocument parse_xml(const std::string& text) {
  XmlDocument doc;
  std::vector<std::size_t> open;
  std::size_t i = 0, roots = 0;
  auto fail = [&](const std::string& why) {
    doc.error = why + " at offset " + std::to_string(i);
    return doc;
  };
  if (text.compare(0, 5, "<?xml") == 0) i = text.find("?>") + 2;
  while (i < text.size()) {
    if (text[i] != '<') {
      const std::size_t lt = text.find('<', i);
      const std::string chars = text.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
      std::string decoded;
      if (!decode_entities(chars, decoded)) return fail("bad character data");
      if (open.empty()) {
        for (char c : chars)
          if (!std::isspace(static_cast<unsigned char>(c))) return fail("text outside the root element");
      } else {
        doc.elements[open.back()].text += decoded;
      }
      if (lt == std::string::npos) break;
      i = lt;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      const std::size_t end = text.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    if (text.compare(i, 2, "</") == 0) {
      const std::size_t gt = text.find('>', i);
      if (gt == std::string::npos) return fail("unterminated end tag");
      const std::string name = text.substr(i + 2, gt - i - 2);
      if (open.empty() || doc.elements[open.back()].name != name) return fail("end tag </" + name + "> does not match");
      open.pop_back();
      i = gt + 1;
      continue;
    }
    // A start tag: <name (attr="value")* /?>
    std::size_t j = i + 1;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == ':' || text[j] == '-' || text[j] == '_')) ++j;
    XmlElement e;
    e.name = text.substr(i + 1, j - i - 1);
    if (e.name.empty()) return fail("empty tag name");
    e.ancestors = open;
    bool self_closing = false;
    for (;;) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size()) return fail("unterminated start tag");
      if (text[j] == '>') break;
      if (text.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      const std::size_t eq = text.find('=', j);
      if (eq == std::string::npos || eq + 1 >= text.size() || (text[eq + 1] != '"' && text[eq + 1] != '\'')) return fail("unquoted attribute");
      const std::string key = text.substr(j, eq - j);
      const std::size_t close = text.find(text[eq + 1], eq + 2);
      if (close == std::string::npos) return fail("unterminated attribute");
      std::string value;
      if (!decode_entities(text.substr(eq + 2, close - eq - 2), value)) return fail("bad attribute value for " + key);
      if (!e.attrs.emplace(key, value).second) return fail("attribute " + key + " twice");
      j = close + 1;
    }
    if (open.empty() && ++roots > 1) return fail("two root elements");
    doc.elements.push_back(std::move(e));
    if (!self_closing) open.push_back(doc.elements.size() - 1);
    i = j + 1;
  }
  if (!open.empty()) {
    i = text.size();
    return fail("<" + doc.elements[open.back()].name + "> is never closed");
  }
  if (doc.elements.empty()) return fail("no element");
  return doc;
}

}  // namespace redflow::testing
