#include "gguf/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace verdict::gguf {

Result<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{path + ": cannot open: " + std::strerror(errno)};
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        return Error{path + ": cannot stat: " + std::strerror(e)};
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error{path + ": not a regular file"};
    }
    auto m = std::make_unique<MappedFile>();
    m->path = path;
    m->size = static_cast<size_t>(st.st_size);
    if (m->size > 0) {
        void* p = ::mmap(nullptr, m->size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            return Error{path + ": cannot map " + std::to_string(m->size) + " bytes: " + std::strerror(e)};
        }
        m->data = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
    return m;
}

MappedFile::~MappedFile() {
    if (data && size) ::munmap(const_cast<uint8_t*>(data), size);
}

}  // namespace verdict::gguf
