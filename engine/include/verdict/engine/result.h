// Errors as values for every engine boundary (files, user input, memory, driver).
//
// The engine never aborts the host process: anything caused by input returns an Error with a
// precise message (file, field, tensor, byte offset). Asserts are kept for internal invariants.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace verdict {

// One failure, described for a person. `message` names the file and the field/offset when known.
struct Error {
    std::string message;
};

// Either a value or an Error. Deliberately small: ok(), value(), error(), operator bool.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}  // NOLINT

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<0>(m_v); }
    const T& value() const& { assert(ok()); return std::get<0>(m_v); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_ok(false), m_error(std::move(error)) {}  // NOLINT

    bool ok() const { return m_ok; }
    explicit operator bool() const { return m_ok; }
    const Error& error() const { assert(!m_ok); return m_error; }

private:
    bool m_ok = true;
    Error m_error;
};

inline Result<void> okResult() { return {}; }

}  // namespace verdict
