import CloudKitWeb

// Foundation and other modules export types with these names; in this module they mean the wire models.
typealias Record = CloudKitWeb.Record
typealias SortDescriptor = CloudKitWeb.SortDescriptor
