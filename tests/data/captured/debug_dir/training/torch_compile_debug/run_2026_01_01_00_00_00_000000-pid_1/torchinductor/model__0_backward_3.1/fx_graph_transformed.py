class GraphModule(torch.nn.Module):
    def forward(self, primals_3: "f32[2, 8]", primals_4: "f32[4, 8]", relu: "f32[2, 8]", tangents_1: "f32[2, 4]"):
        # No stacktrace found for following nodes
        permute_1: "f32[8, 4]" = torch.ops.aten.permute.default(primals_4, [1, 0]);  primals_4 = None
        permute_2: "f32[4, 8]" = torch.ops.aten.permute.default(permute_1, [1, 0]);  permute_1 = None
        mm: "f32[2, 8]" = torch.ops.aten.mm.default(tangents_1, permute_2);  permute_2 = None
        permute_3: "f32[4, 2]" = torch.ops.aten.permute.default(tangents_1, [1, 0])
        mm_1: "f32[4, 8]" = torch.ops.aten.mm.default(permute_3, relu);  permute_3 = None
        sum_1: "f32[1, 4]" = torch.ops.aten.sum.dim_IntList(tangents_1, [0], True);  tangents_1 = None
        view: "f32[4]" = torch.ops.aten.reshape.default(sum_1, [4]);  sum_1 = None
        le: "b8[2, 8]" = torch.ops.aten.le.Scalar(relu, 0);  relu = None
        full_default: "f32[]" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        where: "f32[2, 8]" = torch.ops.aten.where.self(le, full_default, mm);  le = full_default = mm = None
        permute_6: "f32[8, 2]" = torch.ops.aten.permute.default(where, [1, 0])
        mm_2: "f32[8, 8]" = torch.ops.aten.mm.default(permute_6, primals_3);  permute_6 = primals_3 = None
        sum_2: "f32[1, 8]" = torch.ops.aten.sum.dim_IntList(where, [0], True);  where = None
        view_1: "f32[8]" = torch.ops.aten.reshape.default(sum_2, [8]);  sum_2 = None
        return (mm_2, view_1, None, mm_1, view)
