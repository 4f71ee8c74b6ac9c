// What a workbench service (core/services) returns: a value, or an error that says what kind of
// failure it was, so that the CLI can pick its exit status and the window its wording without
// parsing messages.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace verdict::core {

enum class ServiceFailure {
    BadInput,   // the person's choices or the input files are wrong (no such suite, run, model file)
    Storage,    // the results database refused a read or a write
    ModelOpen,  // the model could not be opened (a file the engine refuses, no GPU, an endpoint that does not answer)
    Cancelled,  // stopped by the caller before anything was stored
    Runtime,    // the measurement itself failed: nothing could be measured (every request of a load test failed)
};

struct ServiceError {
    ServiceFailure kind = ServiceFailure::BadInput;
    std::string message;
};

template <class T>
class [[nodiscard]] ServiceResult {
public:
    ServiceResult(T value) : m_value(std::move(value)) {}           // NOLINT: implicit by design
    ServiceResult(ServiceError error) : m_error(std::move(error)) {}  // NOLINT

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    T& operator*() { assert(ok()); return *m_value; }
    const T& operator*() const { assert(ok()); return *m_value; }
    T* operator->() { assert(ok()); return &*m_value; }
    const T* operator->() const { assert(ok()); return &*m_value; }
    const ServiceError& error() const { assert(!ok()); return m_error; }

private:
    std::optional<T> m_value;
    ServiceError m_error;
};

}  // namespace verdict::core
