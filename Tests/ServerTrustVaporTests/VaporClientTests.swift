#if VaporClient
import Vapor
#endif
