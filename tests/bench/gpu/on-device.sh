# on-device.sh - sourced on the GPU machine from the tree's root (carry-deps.sh
# put it in .devdeps/ with the packages): unpacks the .deb files once into
# /tmp/deps and points the compiler, pkg-config, the linker, python and PATH
# at them.  `source .devdeps/on-device.sh; make WERROR= all`
deps=/tmp/deps
lib=$deps/usr/lib/x86_64-linux-gnu
if [ ! -d "$lib" ]; then
    mkdir -p "$deps"
    for deb in .devdeps/*.deb; do dpkg -x "$deb" "$deps"; done
    # a -dev package's .so link names a runtime library the machine may
    # already have under another version: link to the machine's
    for so in "$lib"/*.so; do
        [ -e "$so" ] && continue
        have=$(ls /usr/lib/x86_64-linux-gnu/"$(basename "$so")".* 2>/dev/null | head -n 1)
        [ -n "$have" ] && ln -sf "$have" "$so"
    done
    ln -sf "$lib/openblas-pthread/libopenblas.so.0" "$lib/libopenblas.so.0"
    ln -sf "$lib/openblas-pthread/libopenblas.so" "$lib/libopenblas.so"
fi
export PKG_CONFIG_SYSROOT_DIR=$deps PKG_CONFIG_PATH=$lib/pkgconfig:$deps/usr/share/pkgconfig
export CPATH=$deps/usr/include:$deps/usr/include/x86_64-linux-gnu
export LIBRARY_PATH=$lib:$lib/openblas-pthread LD_LIBRARY_PATH=$lib:$lib/openblas-pthread
export PATH=$deps/usr/bin:/usr/local/cuda/bin:$PATH PYTHONPATH=$deps/usr/lib/python3/dist-packages
