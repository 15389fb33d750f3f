"""CUDA graphs (cuGraph*, stream capture, cuUserObject*), one module per concern:

    model.py        nodes, edges and node parameters: one representation for
                    graphs built node by node, captured, cloned or instantiated
    memory.py       graph-owned memory (alloc and free nodes) and its footprint
    base.py         handles to graphs and nodes, node lists, destroying a graph
    construct.py    cuGraphCreate, cuGraphAdd*Node, *NodeGet/SetParams, edges,
                    queries, clones, graph memory's nodes and attributes
    executable.py   instantiation, launch, cuGraphExecUpdate, cuGraphExec*SetParams
    capture.py      stream capture into graphs, memory nodes in a capture
    conditional.py  conditional nodes: handles, the device runtime's
                    cudaGraphSetConditional, which bodies run
    user_objects.py cuUserObject*, cuGraphRetain/ReleaseUserObject
    api.py          GraphAPI, the composition the driver binds
"""
