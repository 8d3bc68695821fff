# antler_sanitize(target): adds AddressSanitizer + UndefinedBehaviorSanitizer flags to a target
# when ANTLER_SANITIZE is on. PUBLIC so that programs linking antler are instrumented too.
function(antler_sanitize target)
  if(ANTLER_SANITIZE)
    target_compile_options(${target} PUBLIC -fsanitize=address,undefined -fno-omit-frame-pointer
                                            -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()
