// A self-signed certificate for TLS tests, made with OpenSSL in the test: EC P-256,
// subjectAltName IP:127.0.0.1 and DNS:localhost, CA:TRUE (so the certificate is its own CA file
// for a client's --ca-file), valid from an hour ago for a week. Written as PEM files, the
// certificate and its private key (for servers that load files), removed by the destructor.
// Used by the fake OpenAI server (fake_openai_server.h) and the tests of `verdict serve` over https.
#pragma once

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <unistd.h>

namespace verdict::test {

class TestCertificate {
public:
    TestCertificate() { m_ok = make(); }
    ~TestCertificate() {
        if (m_cert) X509_free(m_cert);
        if (m_key) EVP_PKEY_free(m_key);
        if (!m_certFile.empty()) std::remove(m_certFile.c_str());
        if (!m_keyFile.empty()) std::remove(m_keyFile.c_str());
    }
    TestCertificate(const TestCertificate&) = delete;
    TestCertificate& operator=(const TestCertificate&) = delete;

    bool ok() const { return m_ok; }
    const std::string& error() const { return m_error; }
    X509* cert() const { return m_cert; }              // owned here
    EVP_PKEY* key() const { return m_key; }            // owned here
    const std::string& certFile() const { return m_certFile; }  // PEM certificate
    const std::string& keyFile() const { return m_keyFile; }    // PEM private key (PKCS#8, no passphrase)

private:
    bool make() {
        m_key = EVP_EC_gen("P-256");
        m_cert = X509_new();
        if (!m_key || !m_cert) return fail("cannot make a key");
        X509_set_version(m_cert, 2);
        ASN1_INTEGER_set(X509_get_serialNumber(m_cert),
                         static_cast<long>(std::chrono::system_clock::now().time_since_epoch().count() & 0x7fffffff));
        X509_gmtime_adj(X509_getm_notBefore(m_cert), -3600);
        X509_gmtime_adj(X509_getm_notAfter(m_cert), 7 * 86400);
        X509_set_pubkey(m_cert, m_key);
        X509_NAME* name = X509_get_subject_name(m_cert);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("verdict test server"), -1, -1, 0);
        X509_set_issuer_name(m_cert, name);
        X509V3_CTX ctx;
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, m_cert, m_cert, nullptr, nullptr, 0);
        for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                                  std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                                  std::pair{NID_subject_key_identifier, "hash"}}) {
            X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
            if (!ext) return fail("cannot add a certificate extension");
            X509_add_ext(m_cert, ext, -1);
            X509_EXTENSION_free(ext);
        }
        if (X509_sign(m_cert, m_key, EVP_sha256()) == 0) return fail("cannot sign the certificate");
        return writePem("cert", m_certFile, [this](FILE* f) { return PEM_write_X509(f, m_cert) == 1; }) &&
               writePem("key", m_keyFile, [this](FILE* f) {
                   return PEM_write_PrivateKey(f, m_key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
               });
    }
    template <class Write>
    bool writePem(const char* what, std::string& path, Write write) {
        std::string name = std::string("/tmp/verdict-test-") + what + "-XXXXXX";
        const int fd = mkstemp(name.data());
        if (fd < 0) return fail(std::string("cannot create the ") + what + " file");
        path = name;
        FILE* f = fdopen(fd, "w");
        const bool written = f && write(f);
        if (f) std::fclose(f);
        else ::close(fd);
        return written || fail(std::string("cannot write the ") + what + " file");
    }
    bool fail(const std::string& why) {
        m_error = why;
        return false;
    }

    bool m_ok = false;
    std::string m_error;
    X509* m_cert = nullptr;
    EVP_PKEY* m_key = nullptr;
    std::string m_certFile, m_keyFile;
};

}  // namespace verdict::test
