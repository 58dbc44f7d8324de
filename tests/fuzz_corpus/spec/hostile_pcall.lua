stream "gaussian" { n = 16 }
method "exact" {}
local function spin() while true do end end
pcall(function() while true do pcall(spin) end end)
xpcall(spin, function(m) while true do end end)
setmetatable({}, {__gc = function() while true do end end})
