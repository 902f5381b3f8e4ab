// Chat templates rendered without a Jinja engine. A tokenizer folder's template is compared, its
// line endings made LF and its surrounding whitespace trimmed, with the templates vgen knows, and
// rendered by C++ code written for that template; any other template is refused naming the file.
//
// Known: Qwen3-VL-Instruct's (Qwen/Qwen3-VL-8B-Instruct's chat_template.jinja, 5,292 bytes, SHA-256
// 3636d0f0…89e4), the text_tokenizer/ template of the Cosmos 3 checkpoints. For string contents and
// no tools it renders an optional leading system message, then each user/assistant turn as
// "<|im_start|>ROLE\nCONTENT<|im_end|>\n" (later system messages render nothing), then
// "<|im_start|>assistant\n" when add_generation_prompt.
#pragma once
#include <string>
#include <vector>

namespace vgen {

enum class ChatTemplateKind { kQwen3VL };

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
};

// The template of tokenizer folder `dir`, as transformers picks it: chat_template.jinja, else
// tokenizer_config.json's `chat_template` (a string, or the entry named "default" of a list).
// Throws kModel naming the file when there is none or it is not a known template.
ChatTemplateKind read_chat_template(const std::string& dir);

// `messages` through the template; throws kInput for a role the renderer does not handle.
std::string render_chat(ChatTemplateKind kind, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt);

// The known template's text (tests compare it with the fixture's).
const std::string& qwen3_vl_chat_template();

}  // namespace vgen
