#include "model/text/qwen_chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// Qwen/Qwen3-VL-8B-Instruct's chat_template.jinja, byte for byte.
const char* const kQwen3VLTemplate = R"JINJA({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {%- if messages[0].content is string %}
            {{- messages[0].content }}
        {%- else %}
            {%- for content in messages[0].content %}
                {%- if 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' }}
        {%- if messages[0].content is string %}
            {{- messages[0].content }}
        {%- else %}
            {%- for content in messages[0].content %}
                {%- if 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set image_count = namespace(value=0) %}
{%- set video_count = namespace(value=0) %}
{%- for message in messages %}
    {%- if message.role == "user" %}
        {{- '<|im_start|>' + message.role + '\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content in message.content %}
                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}
                    {%- set image_count.value = image_count.value + 1 %}
                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}
                    <|vision_start|><|image_pad|><|vision_end|>
                {%- elif content.type == 'video' or 'video' in content %}
                    {%- set video_count.value = video_count.value + 1 %}
                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}
                    <|vision_start|><|video_pad|><|vision_end|>
                {%- elif 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content_item in message.content %}
                {%- if 'text' in content_item %}
                    {{- content_item.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and message.content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content in message.content %}
                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}
                    {%- set image_count.value = image_count.value + 1 %}
                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}
                    <|vision_start|><|image_pad|><|vision_end|>
                {%- elif content.type == 'video' or 'video' in content %}
                    {%- set video_count.value = video_count.value + 1 %}
                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}
                    <|vision_start|><|video_pad|><|vision_end|>
                {%- elif 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)JINJA";

std::string normalise(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i)
    if (!(s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) out += s[i];
  const size_t b = out.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return out.substr(b, out.find_last_not_of(" \t\r\n") + 1 - b);
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  VGEN_CHECK(f.good(), ExitCode::kModel, "chat template {}: cannot open the file", p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// tokenizer_config.json's chat_template, or "" when it has none.
std::string config_template(const fs::path& cfg_path) {
  if (!fs::exists(cfg_path)) return {};
  const Json cfg = read_json_file(cfg_path.string(), ExitCode::kModel);
  if (!cfg.is_object() || !cfg.contains("chat_template") || cfg["chat_template"].is_null()) return {};
  const Json& t = cfg["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())
    for (const Json& e : t)
      if (e.is_object() && e.value("name", Json()) == "default" && e.contains("template") && e["template"].is_string())
        return e["template"].get<std::string>();
  VGEN_THROW(ExitCode::kModel,
             "chat template in {}: chat_template is neither a string nor a list with a \"default\" entry",
             cfg_path.string());
}

}  // namespace

const std::string& qwen3_vl_chat_template() {
  static const std::string t = kQwen3VLTemplate;
  return t;
}

ChatTemplateKind read_chat_template(const std::string& dir) {
  const fs::path jinja = fs::path(dir) / "chat_template.jinja";
  const fs::path cfg = fs::path(dir) / "tokenizer_config.json";
  std::string text, from;
  if (fs::exists(jinja)) {
    text = read_text(jinja), from = jinja.string();
  } else {
    text = config_template(cfg), from = cfg.string();
  }
  VGEN_CHECK(!text.empty(), ExitCode::kModel, "tokenizer {}: no chat template (neither chat_template.jinja nor "
             "tokenizer_config.json's chat_template)", dir);
  static const std::string known = normalise(qwen3_vl_chat_template());
  if (normalise(text) == known) return ChatTemplateKind::kQwen3VL;
  VGEN_THROW(ExitCode::kModel, "chat template {}: this template is not supported (vgen renders Qwen3-VL-Instruct's "
             "chat template only, without a Jinja engine)", from);
}

std::string render_chat(ChatTemplateKind kind, const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  VGEN_CHECK(kind == ChatTemplateKind::kQwen3VL, ExitCode::kInternal, "unknown chat template kind");
  std::string out;
  if (!messages.empty() && messages[0].role == "system")
    out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
  for (const ChatMessage& m : messages) {
    if (m.role == "system") continue;  // only a leading one renders, before the turns
    VGEN_CHECK(m.role == "user" || m.role == "assistant", ExitCode::kInput,
               "chat message role '{}' is not supported (system, user, assistant)", m.role);
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace vgen
