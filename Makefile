# The targets behind the README's two set-up commands, ./verdict.sh run and ./verdict.sh test
# (verdict.sh installs the dependencies, make among them, first). Both install dependencies
# (packaging/install-deps.sh), configure with CMake + Ninja and build; then:
#   make run   opens the workbench window (or, with no display, runs the headless main job)
#   make test  runs every test (ctest), the output ends with ctest's summary
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: deps configure build run test package clean

deps:
	./packaging/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./packaging/run-main.sh $(BUILD)/verdict

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

package: build
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD)
