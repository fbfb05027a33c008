// The redaction choke point on the secret formats of issue 13 (28 common
// ones, 15 of which the rules missed): the secret never survives, the name
// that says which secret it was does; command lines split over argv elements
// and JSON records are covered; ordinary log text is left alone.
#include "rules/redactor.h"

#include <gtest/gtest.h>

namespace faultline::rules {
namespace {

struct Case {
  const char* text;
  const char* secret;  // must be gone
  const char* kept;    // must stay (the name, the context)
};

TEST(RedactorTest, CommonSecretFormatsAreMasked) {
  const Case cases[] = {
      {"export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234", "abcdefghijklmnopqrstuvwxyz1234", "HF_TOKEN="},
      {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_access_key"},
      {"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY"},
      {"aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"},
      {"export OPENAI_API_KEY='local-0123456789abcdef0123'", "local-0123456789abcdef0123", "OPENAI_API_KEY="},
      {"export OPENAI_API_KEY=\"local-0123456789abcdef0123\"", "local-0123456789abcdef0123", "OPENAI_API_KEY="},
      {"OPENAI_API_KEY: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789",
       "OPENAI"},
      {"curl -H 'Authorization: Basic YWxpY2U6czNjcmV0UGFzcw==' https://r.example/v2/", "YWxpY2U6czNjcmV0UGFzcw",
       "Authorization: Basic"},
      {"curl -H 'Authorization: Bearer abcdef0123456789xyz' http://localhost:8000", "abcdef0123456789xyz", "Bearer"},
      {"curl -H 'X-API-Key: local0123456789abcdef' http://localhost:8000/v1/models", "local0123456789abcdef",
       "X-API-Key"},
      {"settings: api_key=local-0123456789abcdef timeout=30", "local-0123456789abcdef", "timeout=30"},
      {"WANDB_API_KEY: 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567",
       "WANDB_API_KEY"},
      {"python train.py --hf_token hf_local0123456789 --output_dir out", "local0123456789", "--output_dir out"},
      {"vllm serve m --api-key sk-local-0123456789abcdef --port 8000", "0123456789abcdef", "--port 8000"},
      {"GET https://api.example.com/v1/models?api_key=local0123456789&limit=5", "local0123456789", "limit=5"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----",
       "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn", "BEGIN RSA PRIVATE KEY"},
      {"\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n\"", "MIIEvQIBADANBgkqhkiG9w0B",
       "private_key"},
      {"token xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx", "token"},
      {"https://hooks.slack.com/services/T0000000/B0000000/abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx",
       "hooks.slack.com"},
      {"key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "SyA1234567890abcdefghijklmnopqrstuv", "key"},
      {"secret abc8Q~abcdefghijklmnopqrstuvwxyz0123456", "abcdefghijklmnopqrstuvwxyz0123456", "secret"},
      {"AccountName=s;AccountKey=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH==;EndpointSuffix=x",
       "abcdefghijklmnopqrstuvwxyz0123456789", "EndpointSuffix=x"},
      {"git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git", "abcdefghijklmnopqrstuvwxyz",
       "github.com"},
      {"HTTPS_PROXY=http://alice:s3cretPass@proxy.example:3128", "s3cretPass", "alice"},
      {"connecting with password=hunter2 on 10.0.0.5", "hunter2", "10.0.0.5"},
      {"{'HF_TOKEN': 'hf_abcdefghijklmnopqrstuvwxyz1234', 'CUDA_VISIBLE_DEVICES': '0,1'}", "abcdefghijklmnopqrstuvwxyz",
       "CUDA_VISIBLE_DEVICES"},
      {"client_secret: abcDEF0123456789", "abcDEF0123456789", "client_secret"},
      {"curl -u alice:s3cretPass https://r.example/v2/", "s3cretPass", "alice"},
      {"env: GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 HOME=/root", "abcdefghijklmnopqrstuvwxyz", "HOME"},
      {"AZURE_CLIENT_SECRET=abc8Q~abcdefghijklmnopqrstuvwxyz0123456", "abcdefghijklmnopqrstuvwxyz", "AZURE_CLIENT_"},
      {"export DB_PASSWORD=hu2 HOME=/root", "hu2", "DB_PASSWORD="},
      {"PGPASSWORD=pgx9 psql -h db", "pgx9", "PGPASSWORD="},
      {"HF_TOKEN=0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef", "HF_TOKEN="},
  };
  const Redactor& r = Secrets();
  EXPECT_GE(r.size(), 20u);
  for (const Case& c : cases) {
    std::string out = r.Text(c.text);
    EXPECT_EQ(out.find(c.secret), std::string::npos) << c.text << "\n -> " << out;
    EXPECT_NE(out.find(c.kept), std::string::npos) << c.text << "\n -> " << out;
  }
}

TEST(RedactorTest, OrdinaryLinesAreLeftAlone) {
  for (const char* line : {
           "INFO 05-09 15:14:59 [scheduler.py:239] Chunked prefill is enabled with max_num_batched_tokens=2048.",
           "vllm serve Qwen/Qwen3-8B --max-num-batched-tokens 8192 --tokenizer Qwen/Qwen3-8B --port 8000",
           "distributed_init_method=tcp://127.0.0.1:38415 backend=nccl",
           "INFO Basic configuration loaded from /etc/app.conf",
           "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
           // Upper-case names that contain a secret word but name no secret, and values that are no secret
           // (numbers, booleans, placeholders, $references, paths): the false positives of issue 13's redaction.
           "export MAX_TOKENS=2048 NUM_LAYERS=32 MAX_NEW_TOKENS=512 VLLM_MAX_TOKENS_PER_BATCH=8192",
           "TOKENIZERS_PARALLELISM=false MAX_TOKEN=32768 ADD_BOS_TOKEN=false PAD_TOKEN=<|endoftext|>",
           "HF_TOKEN=$HF_TOKEN HF_TOKEN_PATH=/root/.cache/huggingface/token KEY_SIZE=4096 PASSWORD_FILE=/run/db",
       }) {
    EXPECT_EQ(Secrets().Text(line), line);
  }
}

// A redact rule's samples are checked when the redactor is built: one that masks a line it lists as
// no_match, or misses its own sample, is refused (so the embedded file cannot regress silently).
TEST(RedactorTest, BuildChecksEachRulesSamples) {
  Rule rule;
  rule.id = "redact.test-broad";
  rule.kind = RuleKind::kRedact;
  rule.pattern = R"(\b([A-Z][A-Z0-9_]*TOKEN[A-Z0-9_]*=)\S+)";
  rule.match_samples = {"HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234"};
  EXPECT_TRUE(Redactor::Build({rule}).ok());
  rule.no_match_samples = {"MAX_TOKENS=2048"};
  auto broad = Redactor::Build({rule});
  ASSERT_FALSE(broad.ok());
  EXPECT_NE(broad.status().message().find("no_match sample: MAX_TOKENS=2048"), std::string::npos)
      << broad.status().message();
  rule.no_match_samples.clear();
  rule.match_samples.push_back("WANDB_API_KEY=0123456789abcdef");
  EXPECT_FALSE(Redactor::Build({rule}).ok());
}

TEST(RedactorTest, ArgvPairsAndJsonRecords) {
  std::vector<std::string> argv = {"vllm",       "serve",         "m",      "--api-key", "sk-local-0123456789abcdef",
                                   "--hf-token", "plainvalue123", "--port", "8000"};
  Secrets().Argv(&argv);
  EXPECT_EQ(argv[4], "<redacted>");
  EXPECT_EQ(argv[6], "<redacted>");
  EXPECT_EQ(argv[8], "8000");
  auto record = nlohmann::json::parse(R"({"type":"event","event":"started","command":["python","t.py",
      "--wandb_api_key","abcdef0123456789"],"log":{"last_line":"login with HF_TOKEN=hf_secret0123456789abcdefghij"}})");
  std::string line = Secrets().JsonLine(record);
  EXPECT_EQ(line.find("abcdef0123456789"), std::string::npos) << line;
  EXPECT_EQ(line.find("secret0123456789"), std::string::npos) << line;
  EXPECT_NE(line.find("\"--wandb_api_key\""), std::string::npos) << line;
  EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace faultline::rules
