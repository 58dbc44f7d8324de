stream "gaussian" { n = 16 }
method "exact" {}
local l = setmetatable({}, {__len = function() return 4 end, __index = function(_, i) sweep { a = {1}, b = {2} }; queries { at = {1,2,3} }; return i end})
sweep "T" (l)
queries { at = l }
